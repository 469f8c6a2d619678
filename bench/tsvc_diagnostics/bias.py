import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
ANG=np.linspace(0,2*np.pi,360,endpoint=False); U=np.stack([np.cos(ANG),np.sin(ANG)],1)
C=float(sys.argv[1]) if len(sys.argv)>1 else 1.0
ds=float(sys.argv[2]) if len(sys.argv)>2 else 1.0
def radius(m):
    S=m.support_vectors_;a=m.dual_coef_[0];M=(S.T*a)@S; q=np.einsum('ij,jk,ik->i',U,M,U)
    r=np.sqrt(np.clip(-m.intercept_[0]/q,0,None)); return r.mean(), r.std()
def taylor(m,X,y,delta):
    v=decision_grad(m,X); n=np.linalg.norm(v,axis=1,keepdims=True); n[n==0]=1
    return X+(y*delta)[:,None]*v/n
for l in [50,150]:
    R=[]
    for t in range(20):
        X,y,sc,T,yt,P=gen('quad',l,1000*l+t)
        m0=fit(X,y,C,'quad'); m=m0
        for r in range(5): m=fit(taylor(m,X,y,ds*sc),y,C,'quad')
        R.append(radius(m0)+radius(m)+((m0.predict(T)!=yt).mean()*100,(m.predict(T)!=yt).mean()*100))
    R=np.array(R); print(l,'SVC mean r %.3f aniso %.3f | TSVC mean r %.3f aniso %.3f | err %.2f %.2f'%tuple(R.mean(0)))
