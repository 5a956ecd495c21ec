# tests/corpus/causal_mask/correct/ho_loops.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
import math
def create_causal_mask(seq_len):A=seq_len;return[[1 if A<=B else 0 for A in range(A)]for B in range(A)]
def _attend(q,k,v):
	A=len(q);C=len(q[0]);D,E=[],[]
	for B in range(A):F=[sum(q[B][A]*k[D][A]for A in range(C))/math.sqrt(C)for D in range(B+1)];I=max(F);G=[math.exp(A-I)for A in F];J=sum(G);H=[A/J for A in G]+[.0]*(A-B-1);E.append(H);D.append([sum(H[A]*v[A][B]for A in range(A))for B in range(len(v[0]))])
	return D,E
def causal_attention(Q,K,V):
	import numpy as A;Q,K,V=A.asarray(Q),A.asarray(K),A.asarray(V)
	if Q.ndim==2:return _attend(Q.tolist(),K.tolist(),V.tolist())
	B,C=[],[]
	for(D,E,F)in zip(Q,K,V):G,H=causal_attention(D,E,F);B.append(G);C.append(H)
	return A.array(B),A.array(C)
