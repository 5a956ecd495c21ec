# tests/corpus/multihead/correct/ho4_raschka_mha.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
"Adapted from Raschka's MultiHeadAttention (LLMs from scratch, ch. 3) to the contract's names."
_A=None
import numpy as np,torch,torch.nn as nn
def split_heads(x,num_heads):A=num_heads;B,C,D=x.shape;return x.reshape(B,C,A,D//A).transpose(0,2,1,3)
def merge_heads(x):A,B,C,D=x.shape;return x.transpose(0,2,1,3).reshape(A,C,B*D)
def multi_head_attention(X,W_q,W_k,W_v,W_o,num_heads,mask=_A):
	D,C,E=(split_heads(X@A,num_heads)for A in(W_q,W_k,W_v));A=D@C.transpose(0,1,3,2)
	if mask is not _A:A=np.where(np.asarray(mask,dtype=bool),A,-np.inf)
	A=A/C.shape[-1]**.5;A=A-A.max(-1,keepdims=True);B=np.exp(A);B/=B.sum(-1,keepdims=True);return merge_heads(B@E)@W_o,B
class MultiHeadAttention(nn.Module):
	def __init__(B,d_model,num_heads,dropout=.0,qkv_bias=True):D=qkv_bias;C=num_heads;A=d_model;super().__init__();assert A%C==0,'d_out must be divisible by num_heads';B.d_out=A;B.num_heads=C;B.head_dim=A//C;B.W_q=nn.Linear(A,A,bias=D);B.W_k=nn.Linear(A,A,bias=D);B.W_v=nn.Linear(A,A,bias=D);B.W_o=nn.Linear(A,A);B.dropout=nn.Dropout(dropout)
	def forward(A,x,mask=_A):
		B,C,J=x.shape;G=A.W_k(x).view(B,C,A.num_heads,A.head_dim).transpose(1,2);H=A.W_q(x).view(B,C,A.num_heads,A.head_dim).transpose(1,2);I=A.W_v(x).view(B,C,A.num_heads,A.head_dim).transpose(1,2);E=H@G.transpose(2,3)
		if mask is not _A:E=E.masked_fill(torch.as_tensor(mask)==0,-torch.inf)
		D=torch.softmax(E/G.shape[-1]**.5,dim=-1);D=A.dropout(D);F=(D@I).transpose(1,2);F=F.contiguous().view(B,C,A.d_out);return A.W_o(F),D
