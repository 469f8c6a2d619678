import sys; sys.path.insert(0,__import__('os').path.dirname(__file__))
from h import *
ANG=np.linspace(0,2*np.pi,360,endpoint=False); U=np.stack([np.cos(ANG),np.sin(ANG)],1)
rng=np.random.default_rng(5); P=rng.uniform(-5,5,(int(sys.argv[1]),2)); y,_=label_dist(P,'quad')
T=rng.uniform(-5,5,(20000,2)); yt,_=label_dist(T,'quad')
def radius(m):
    S=m.support_vectors_;a=m.dual_coef_[0];M=(S.T*a)@S; q=np.einsum('ij,jk,ik->i',U,M,U); return np.sqrt(-m.intercept_[0]/q).mean()
for d in [0,1.0]:
    m=fit(P,y,1000.0,'quad')
    for r in range(10):
        v=decision_grad(m,P); n=np.linalg.norm(v,axis=1,keepdims=True); m=fit(P+(y*d)[:,None]*v/n,y,1000.0,'quad')
    print(f"delta {d}: boundary radius {radius(m):.4f} (sqrt(9+d^2) = {np.sqrt(9+d*d):.4f}), clean test error {100*(m.predict(T)!=yt).mean():.2f}%")
