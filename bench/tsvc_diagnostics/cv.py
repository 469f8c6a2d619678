import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
from sklearn.model_selection import StratifiedKFold
import argparse
ap=argparse.ArgumentParser(); ap.add_argument('--target',default='quad'); ap.add_argument('--trials',type=int,default=20)
ap.add_argument('--Cs',default='0.01,0.1,1,10,100'); ap.add_argument('--dss',default='1'); ap.add_argument('--rounds',type=int,default=5)
a=ap.parse_args(); Cs=[float(c) for c in a.Cs.split(',')]; DSS=[float(c) for c in a.dss.split(',')]
def tsvc(X,y,delta,C):
    m=fit(X,y,C,a.target)
    if delta is None: return m
    for r in range(a.rounds):
        if a.target=='lin':
            w=m.coef_[0]; Z=X+(y*delta)[:,None]*w/np.linalg.norm(w)
        else:
            v=decision_grad(m,X); n=np.linalg.norm(v,axis=1,keepdims=True); n[n==0]=1; Z=X+(y*delta)[:,None]*v/n
        m=fit(Z,y,C,a.target)
    return m
def cv_err(X,y,sc,C,ds):
    k=min(5,min((y>0).sum(),(y<0).sum()))
    if k<2: return 0.0
    e=0
    for tr,va in StratifiedKFold(k,shuffle=True,random_state=0).split(X,y):
        m=tsvc(X[tr],y[tr],None if ds is None else ds*sc[tr],C); e+=(m.predict(X[va])!=y[va]).sum()
    return e/len(y)
res=[]
for l in SIZES:
    es,et,cs,ct=[],[],[],[]
    for t in range(a.trials):
        X,y,sc,T,yt,P=gen(a.target,l,1000*l+t)
        Cs_=min(Cs,key=lambda C:cv_err(X,y,sc,C,None))
        Ct,dt=min([(C,d) for C in Cs for d in DSS],key=lambda p:cv_err(X,y,sc,p[0],p[1]))
        es.append((fit(X,y,Cs_,a.target).predict(T)!=yt).mean()*100); et.append((tsvc(X,y,dt*sc,Ct).predict(T)!=yt).mean()*100)
        cs.append(Cs_); ct.append(Ct)
    es,et=np.array(es),np.array(et); res.append(et.mean()<es.mean())
    print(f"{l:4d} SVC {es.mean():6.2f}±{es.std(ddof=1)/np.sqrt(len(es)):.2f} TSVC {et.mean():6.2f}±{et.std(ddof=1)/np.sqrt(len(et)):.2f} w/l {(et<es).sum()}/{(et>es).sum()} medC svc {np.median(cs)} tsvc {np.median(ct)} paper {PAPER[a.target][SIZES.index(l)]}",flush=True)
print(vars(a),'all better',all(res))
