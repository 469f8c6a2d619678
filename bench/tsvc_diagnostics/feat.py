import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
C=float(sys.argv[1]); ds=float(sys.argv[2]); trials=int(sys.argv[3]) if len(sys.argv)>3 else 20
def phi(X): return np.stack([X[:,0]**2,X[:,1]**2,np.sqrt(2)*X[:,0]*X[:,1]],1)
res=[]
for l in SIZES:
    es,et=[],[]
    for t in range(trials):
        X,y,sc,T,yt,P=gen('quad',l,1000*l+t); F=phi(X); FT=phi(T)
        m0=SVC(C=C,kernel='linear',tol=1e-6).fit(F,y); m=m0
        def J(m,Z): w=m.coef_[0]; return 0.5*w@w+C*np.maximum(0,1-y*m.decision_function(Z)).sum()
        for r in range(20):
            w=m.coef_[0]; Z=F+(y*ds*sc)[:,None]*w/np.linalg.norm(w)
            m2=SVC(C=C,kernel='linear',tol=1e-6).fit(Z,y)
            # eq.7 objective
            j=lambda mm: 0.5*mm.coef_[0]@mm.coef_[0]+C*np.maximum(0,1-y*mm.decision_function(F)-ds*sc*np.linalg.norm(mm.coef_[0])).sum()
            if j(m2)>=j(m)-1e-9: break
            m=m2
        es.append((m0.predict(FT)!=yt).mean()*100); et.append((m.predict(FT)!=yt).mean()*100)
    es,et=np.array(es),np.array(et); res.append(et.mean()<es.mean())
    print(f"{l:4d} SVC {es.mean():6.2f} TSVC {et.mean():6.2f} w/l {(et<es).sum()}/{(et>es).sum()}",flush=True)
print('C',C,'ds',ds,'all better',all(res))
