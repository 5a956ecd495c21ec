# tests/corpus/multihead/correct/loops_per_head.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
"One head at a time, with the kit's attention for the numpy version."
_A=None
import numpy as np,torch
from attention import scaled_dot_product_attention
def split_heads(x,num_heads):A=num_heads;x=np.asarray(x);B=x.shape[-1]//A;return np.stack([x[:,:,A*B:(A+1)*B]for A in range(A)],axis=1)
def merge_heads(x):x=np.asarray(x);return np.concatenate([x[:,A]for A in range(x.shape[1])],axis=-1)
def multi_head_attention(X,W_q,W_k,W_v,W_o,num_heads,mask=_A):
	A=num_heads;X=np.asarray(X);F,G,H=split_heads(X@W_q,A),split_heads(X@W_k,A),split_heads(X@W_v,A);C,D=[],[];E=_A if mask is _A else np.broadcast_to(mask,(X.shape[0],A,X.shape[1],X.shape[1]))
	for B in range(A):I,J=scaled_dot_product_attention(F[:,B],G[:,B],H[:,B],_A if E is _A else E[:,B]);C.append(I);D.append(J)
	return merge_heads(np.stack(C,axis=1))@W_o,np.stack(D,axis=1)
class MultiHeadAttention(torch.nn.Module):
	def __init__(A,d_model,num_heads):B=d_model;super().__init__();A.num_heads=num_heads;A.W_q,A.W_k,A.W_v,A.W_o=(torch.nn.Linear(B,B)for A in range(4))
	def forward(A,x,mask=_A):
		B=mask;D=x.shape[-1]//A.num_heads;K,L,M=A.W_q(x),A.W_k(x),A.W_v(x);N,G,O=x.shape
		if B is not _A:B=torch.as_tensor(B).bool().expand(N,A.num_heads,G,G)
		H,I=[],[]
		for E in range(A.num_heads):
			F=slice(E*D,(E+1)*D);C=K[...,F]@L[...,F].transpose(-1,-2)/D**.5
			if B is not _A:C=torch.where(B[:,E],C,torch.tensor(-1e9,dtype=C.dtype))
			J=C.softmax(dim=-1);I.append(J);H.append(J@M[...,F])
		return A.W_o(torch.cat(H,dim=-1)),torch.stack(I,dim=1)
