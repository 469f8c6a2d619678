import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
ANG=np.linspace(0,2*np.pi,3601)[:-1]; CIRC=np.stack([np.cos(ANG),np.sin(ANG)],1)
C=float(sys.argv[1])
for l in [50,150]:
    gaps=[];hing=[];hx=[]
    for t in range(20):
        X,y,sc,T,yt,P=gen('quad',l,1000*l+t); m=fit(X,y,C,'quad')
        v=decision_grad(m,X); n=np.linalg.norm(v,axis=1,keepdims=True); Zt=X+(y*sc)[:,None]*v/n
        ft=y*m.decision_function(Zt)
        fe=np.empty(l)
        for i in range(l):
            cand=X[i]+sc[i]*CIRC
            if np.linalg.norm(X[i])<=sc[i]: cand=np.vstack([cand,[0,0]])
            fe[i]=(y[i]*m.decision_function(cand)).max()
        f0=y*m.decision_function(X)
        gaps.append(np.median((fe-ft)/np.maximum(fe-f0,1e-12)))
        hing.append(np.maximum(0,1-ft).sum()); hx.append(np.maximum(0,1-fe).sum())
    print(l,'median relative shortfall of Taylor vs exact gain %.4f ; sum hinge after Taylor %.3f exact %.3f'%(np.mean(gaps),np.mean(hing),np.mean(hx)))
