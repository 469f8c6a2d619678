# Python diagnostics for the TSVC synthetic study (docs/reproductions.md, "Why the quadratic half does not
# reproduce"). numpy + scikit-learn (libsvm) re-implementation of the protocol, its own RNG: run.py (errors;
# --step exact = trust-region inner step), trs.py (Taylor vs exact inner objective), bias.py / decomp.py
# (boundary radius, errors at the target radius), clean.py L (noise-free data), cv.py (C by 5-fold CV on
# the training draw), feat.py (feature-space TSVC). Single-threaded; each run takes seconds to ~2 minutes.
import numpy as np, sys
from sklearn.svm import SVC
SIZES=[20,30,50,100,150]
PAPER={'lin':[(8.9,6.1),(7.8,5.2),(5.5,3.8),(2.9,2.1),(2.1,1.6)],'quad':[(9.9,7.9),(7.5,6.1),(6.7,4.4),(3.2,2.8),(2.8,2.4)]}
ALG=False
COEF0=0.0
def label_dist(P,target):
    if target=='lin':
        v=P[:,0]-P[:,1]; return np.where(v>0,1,-1), np.abs(v)/np.sqrt(2)
    r=np.sqrt((P**2).sum(1)); return np.where(r>3,1,-1), (np.abs(r*r-9) if ALG else np.abs(r-3))
def gen(target,l,seed,noise='std',outliers=True,test_size=10000):
    rng=np.random.default_rng(seed)
    while True:
        P=rng.uniform(-5,5,(l,2)); y,d=label_dist(P,target)
        if (y>0).any() and (y<0).any(): break
    s=rng.uniform(0.1,0.8,l)
    if outliers:
        order=np.argsort(d); nc=int(round(0.2*l)); no=int(round(0.1*l))
        pick=rng.choice(order[:nc],no,replace=False); s[pick]=rng.uniform(0.5,2.0,no)
    sc=s if noise=='std' else np.sqrt(s)
    X=P+sc[:,None]*rng.standard_normal((l,2))
    T=rng.uniform(-5,5,(test_size,2)); yt,_=label_dist(T,target)
    gen.raw=s
    return X,y,sc,T,yt,P
def kern(target): return dict(kernel='linear') if target=='lin' else dict(kernel='poly',degree=2,gamma=1.0,coef0=COEF0)
def fit(X,y,C,target):
    m=SVC(C=C,tol=1e-6,**kern(target)); m.fit(X,y); return m
def decision_grad(m,Xq):
    # f(x)=sum a_j (x.p_j)^2 + b ; grad = 2 sum a_j (x.p_j) p_j
    S=m.support_vectors_; a=m.dual_coef_[0]
    G=Xq@S.T+COEF0
    return 2*(G*a)@S
