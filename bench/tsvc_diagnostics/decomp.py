import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
ANG=np.linspace(0,2*np.pi,360,endpoint=False); U=np.stack([np.cos(ANG),np.sin(ANG)],1)
C=float(sys.argv[1]); ds=float(sys.argv[2])
def parts(m):
    S=m.support_vectors_;a=m.dual_coef_[0];M=(S.T*a)@S; return M,m.intercept_[0]
def err(M,b,T,yt): return (np.where(np.einsum('ij,jk,ik->i',T,M,T)+b>0,1,-1)!=yt).mean()*100
def oracle(M,b):  # rescale b so that mean boundary radius is 3
    q=np.einsum('ij,jk,ik->i',U,M,U); r=np.sqrt(np.clip(-b/q,0,None)).mean(); return b*(3/r)**2
def taylor(m,X,y,delta):
    v=decision_grad(m,X); n=np.linalg.norm(v,axis=1,keepdims=True); n[n==0]=1
    return X+(y*delta)[:,None]*v/n
for l in SIZES:
    R=[]
    for t in range(30):
        X,y,sc,T,yt,P=gen('quad',l,1000*l+t); T=T[:4000]; yt=yt[:4000]
        m0=fit(X,y,C,'quad'); m=m0
        for r in range(5): m=fit(taylor(m,X,y,ds*sc),y,C,'quad')
        (M0,b0),(M1,b1)=parts(m0),parts(m)
        R.append((err(M0,b0,T,yt),err(M1,b1,T,yt),err(M0,oracle(M0,b0),T,yt),err(M1,oracle(M1,b1),T,yt)))
    print(l,'SVC %.2f TSVC %.2f | radius-corrected SVC %.2f TSVC %.2f'%tuple(np.mean(R,0)),flush=True)
