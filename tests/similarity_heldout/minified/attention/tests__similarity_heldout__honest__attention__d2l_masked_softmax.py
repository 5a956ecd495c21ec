# tests/similarity_heldout/honest/attention/d2l_masked_softmax.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_A=None
import math,numpy as np
def softmax(x,axis=-1):A=np.array(x,dtype=float);C=A.max(axis=axis,keepdims=True);B=np.exp(A-C);D=B.sum(axis=axis,keepdims=True);return B/D
def masked_softmax(X,valid):
	'Perform softmax operation by masking elements on the last axis.';A=valid
	if A is _A:return softmax(X,axis=-1)
	X=np.where(A.astype(bool),X,-1e6);return softmax(X,axis=-1)
class DotProductAttention:
	'Scaled dot product attention.'
	def __init__(A,dropout=.0):A.dropout=dropout
	def __call__(A,queries,keys,values,valid=_A):B=queries;C=B.shape[-1];D=B@keys.swapaxes(-1,-2)/math.sqrt(C);A.attention_weights=masked_softmax(D,valid);return A.attention_weights@values
def scaled_dot_product_attention(Q,K,V,mask=_A):B,C,D=(np.asarray(A,dtype=float)for A in(Q,K,V));E=_A if mask is _A else np.asarray(mask);A=DotProductAttention();F=A(B,C,D,E);return F,A.attention_weights
