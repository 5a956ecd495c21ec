# tests/similarity_heldout/honest/multihead/annotated_port.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_A=None
import math,numpy as np,torch,torch.nn as nn
def attention(query,key,value,mask=_A):
	B=query;D=B.size(-1);A=torch.matmul(B,key.transpose(-2,-1))/math.sqrt(D)
	if mask is not _A:A=A.masked_fill(mask==0,-1e9)
	C=A.softmax(dim=-1);return torch.matmul(C,value),C
def split_heads(x,num_heads):A=num_heads;B,C,D=x.shape;return np.asarray(x).reshape(B,C,A,D//A).transpose(0,2,1,3)
def merge_heads(x):A,B,C,D=x.shape;return np.asarray(x).transpose(0,2,1,3).reshape(A,C,B*D)
def multi_head_attention(X,W_q,W_k,W_v,W_o,num_heads,mask=_A):
	B=num_heads;A=mask;X=torch.as_tensor(np.asarray(X,dtype=np.float64));D=[torch.as_tensor(np.asarray(A,dtype=np.float64))for A in(W_q,W_k,W_v,W_o)];E,L,G=X.shape;F=G//B;H,I,J=[(X@A).view(E,-1,B,F).transpose(1,2)for A in D[:3]]
	if A is not _A:A=torch.as_tensor(np.asarray(A))
	C,K=attention(H,I,J,mask=A);C=C.transpose(1,2).contiguous().view(E,-1,B*F);return(C@D[3]).numpy(),K.numpy()
class MultiHeadAttention(nn.Module):
	def __init__(B,d_model,num_heads):'Take in model size and number of heads.';C=num_heads;A=d_model;super().__init__();assert A%C==0;B.d_k=A//C;B.h=C;B.W_q=nn.Linear(A,A);B.W_k=nn.Linear(A,A);B.W_v=nn.Linear(A,A);B.W_o=nn.Linear(A,A);B.attn=_A
	def forward(A,x,mask=_A):
		B=mask
		if B is not _A:B=torch.as_tensor(B)
		C=x.size(0);D,E,F=[B(x).view(C,-1,A.h,A.d_k).transpose(1,2)for B in(A.W_q,A.W_k,A.W_v)];x,A.attn=attention(D,E,F,mask=B);x=x.transpose(1,2).contiguous().view(C,-1,A.h*A.d_k);return A.W_o(x),A.attn
