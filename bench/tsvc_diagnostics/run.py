import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
import argparse
ap=argparse.ArgumentParser()
ap.add_argument('--C',type=float,default=1.0)
ap.add_argument('--target',default='quad')
ap.add_argument('--step',default='taylor')   # taylor | exact
ap.add_argument('--rounds',type=int,default=10)
ap.add_argument('--ds',type=float,default=1.0)
ap.add_argument('--noise',default='std')
ap.add_argument('--trials',type=int,default=50)
ap.add_argument('--nooutliers',action='store_true')
ap.add_argument('--mono',action='store_true')  # stop when svm objective increases
ap.add_argument('--rawdelta',action='store_true')
ap.add_argument('--alg',action='store_true')
ap.add_argument('--coef0',type=float,default=0)
a=ap.parse_args()
import h; h.ALG=a.alg; h.COEF0=a.coef0
ANG=np.linspace(0,2*np.pi,721)[:-1]; CIRC=np.stack([np.cos(ANG),np.sin(ANG)],1)
def obj(m,X,y,C):
    a_=m.dual_coef_[0]; S=m.support_vectors_
    K=(S@S.T+a.coef0)**2 if a.target=='quad' else S@S.T
    f=m.decision_function(X)
    return 0.5*a_@K@a_ + C*np.maximum(0,1-y*f).sum()
def step(m,X,y,delta):
    if a.target=='lin':
        w=m.coef_[0]; return X+ (y*delta)[:,None]*w/np.linalg.norm(w)
    if a.step=='taylor':
        v=decision_grad(m,X); n=np.linalg.norm(v,axis=1,keepdims=True); n[n==0]=1
        return X+(y*delta)[:,None]*v/n
    # exact: maximise y f(z) over ||z-x||<=delta
    Z=np.empty_like(X)
    for i in range(len(X)):
        cand=X[i]+delta[i]*CIRC
        if np.linalg.norm(X[i])<=delta[i]: cand=np.vstack([cand,[0,0]])
        Z[i]=cand[np.argmax(y[i]*m.decision_function(cand))]
    return Z
res=[]
for l in SIZES:
    es,et=[],[]
    for t in range(a.trials):
        X,y,sc,T,yt,P=gen(a.target,l,1000*l+t,a.noise,not a.nooutliers)
        delta=a.ds*(gen.raw if a.rawdelta else sc)
        m0=fit(X,y,a.C,a.target); es.append((m0.predict(T)!=yt).mean())
        m=m0; J=obj(m0,X,y,a.C)
        for r in range(a.rounds):
            Z=step(m,X,y,delta); m2=fit(Z,y,a.C,a.target); J2=obj(m2,Z,y,a.C)
            if a.mono and J2>=J: break
            m,J=m2,J2
        et.append((m.predict(T)!=yt).mean())
    es,et=np.array(es)*100,np.array(et)*100
    res.append((l,es.mean(),et.mean(),(et<es).sum(),(et>es).sum()))
    print(f"{l:4d} SVC {es.mean():6.2f}±{es.std(ddof=1)/np.sqrt(len(es)):.2f} TSVC {et.mean():6.2f}±{et.std(ddof=1)/np.sqrt(len(et)):.2f} w/l {(et<es).sum()}/{(et>es).sum()} paper {PAPER[a.target][SIZES.index(l)]}",flush=True)
print(vars(a), 'all better:', all(r[2]<r[1] for r in res))
