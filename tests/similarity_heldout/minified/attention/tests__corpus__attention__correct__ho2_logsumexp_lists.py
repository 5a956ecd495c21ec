# tests/corpus/attention/correct/ho2_logsumexp_lists.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
import math
def _lse(row):A=max(row);return A+math.log(sum(math.exp(B-A)for B in row))
def softmax(x,axis=-1):import numpy as A;B=A.moveaxis(A.asarray(x,dtype=float),axis,-1);C=B.reshape(-1,B.shape[-1]);D=[[math.exp(B-_lse(list(A)))for B in A]for A in C];return A.moveaxis(A.array(D).reshape(B.shape),-1,axis).tolist()
def scaled_dot_product_attention(Q,K,V,mask=None):
	import numpy as A;Q,K,V=map(A.asarray,(Q,K,V));B=A.matmul(Q,A.swapaxes(K,-2,-1))*(1./math.sqrt(Q.shape[-1]))
	if mask is not None:B=B+A.where(A.asarray(mask).astype(bool),.0,-1e9)
	C=A.asarray(softmax(B,axis=-1));return(C@V).tolist(),C.tolist()
