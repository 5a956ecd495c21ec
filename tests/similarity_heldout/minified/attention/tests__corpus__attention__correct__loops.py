# tests/corpus/attention/correct/loops.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
'Attention with explicit Python loops: slow, but every number is visible.'
import math,numpy as np
def softmax(x,axis=-1):
	x=np.asarray(x,dtype=float);A=np.moveaxis(x,axis,-1);B=A.reshape(-1,A.shape[-1]);D=np.empty_like(B)
	for E in range(B.shape[0]):
		C=B[E];H=max(C);F=[math.exp(A-H)for A in C];I=sum(F)
		for G in range(len(C)):D[E,G]=F[G]/I
	return np.moveaxis(D.reshape(A.shape),-1,axis)
def scaled_dot_product_attention(Q,K,V,mask=None):
	Q,K,V=(np.asarray(A,dtype=float)for A in(Q,K,V));B,D=Q.shape[-2:];A,I=V.shape[-2:];E=np.broadcast_shapes(Q.shape[:-2],K.shape[:-2],V.shape[:-2]);F=np.broadcast_to(Q,E+(B,D)).reshape(-1,B,D);R=np.broadcast_to(K,E+(A,D)).reshape(-1,A,D);S=np.broadcast_to(V,E+(A,I)).reshape(-1,A,I)
	if mask is None:L=np.ones((F.shape[0],B,A),dtype=bool)
	else:L=np.broadcast_to(np.asarray(mask)!=0,E+(B,A)).reshape(-1,B,A)
	J=np.zeros((F.shape[0],B,A));M=np.zeros((F.shape[0],B,I))
	for C in range(F.shape[0]):
		for G in range(B):
			N=[]
			for H in range(A):
				O=.0
				for P in range(D):O+=F[C,G,P]*R[C,H,P]
				N.append(O/math.sqrt(D)if L[C,G,H]else-1e9)
			J[C,G]=softmax(np.array(N))
			for H in range(A):M[C,G]+=J[C,G,H]*S[C,H]
	return M.reshape(E+(B,I)),J.reshape(E+(B,A))
