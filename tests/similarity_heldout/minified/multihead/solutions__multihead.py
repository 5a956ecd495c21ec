# solutions/multihead.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_E=' weights:'
_D='output:'
_C='__main__'
_B=True
_A=None
import math,numpy as np,torch
from torch import nn
def split_heads(x,num_heads):
	'Split the feature axis into heads.\n\n    (B, T, d_model) -> reshape -> (B, T, h, d_head) -> swap axes 1 and 2 -> (B, h, T, d_head),\n    with d_head = d_model // h; head k holds features k*d_head ... (k+1)*d_head - 1.\n\n    Args:\n        x: array of shape (batch, seq, d_model); d_model divisible by num_heads.\n        num_heads: number of heads h.\n\n    Returns:\n        Array of shape (batch, num_heads, seq, d_model // num_heads).\n    ';A=num_heads;x=np.asarray(x);C,D,B=x.shape
	if B%A:raise ValueError(f"d_model={B} is not divisible by num_heads={A}")
	E=B//A;x=x.reshape(C,D,A,E);return x.transpose(0,2,1,3)
def merge_heads(x):'Undo ``split_heads``: put the heads side by side again.\n\n    (B, h, T, d_head) -> swap axes 1 and 2 -> (B, T, h, d_head) -> reshape -> (B, T, h * d_head).\n\n    Args:\n        x: array of shape (batch, num_heads, seq, d_head).\n\n    Returns:\n        Array of shape (batch, seq, num_heads * d_head).\n    ';x=np.asarray(x);A,B,C,D=x.shape;x=x.transpose(0,2,1,3);return x.reshape(A,C,B*D)
if __name__==_C:
	B,T,d_model=1,3,8;x=(100*np.arange(T)[:,_A]+np.arange(d_model)[_A,:])[_A].astype(float)
	try:heads=split_heads(x,2);print('split:',heads.shape,'\nhead 1 of batch 0:\n',heads[0,1]);print('round trip exact:',bool(np.array_equal(merge_heads(heads),x)))
	except NotImplementedError as err:print(f"not implemented yet: {err}")
def multi_head_attention(X,W_q,W_k,W_v,W_o,num_heads,mask=_A):
	'Multi-head self-attention with projection matrices applied as X @ W.\n\n    Q, K, V = X W_q, X W_k, X W_v                     (B, T, d_model) each\n    split into heads                                  (B, h, T, d_head), d_head = d_model // h\n    weights = softmax(Q_h K_h^T / sqrt(d_head))       (B, h, T, T), masked entries -> -1e9 first\n    heads   = weights @ V_h                           (B, h, T, d_head)\n    output  = merge(heads) @ W_o                      (B, T, d_model)\n\n    Args:\n        X: input, shape (batch, seq, d_model).\n        W_q, W_k, W_v, W_o: projections, each (d_model, d_model).\n        num_heads: number of heads h; must divide d_model.\n        mask: None, or broadcastable to (batch, num_heads, seq, seq); 1/True = may attend.\n\n    Returns:\n        (output, weights): output (batch, seq, d_model), weights (batch, num_heads, seq, seq).\n    ';C=num_heads;X=np.asarray(X);D=X.shape[-1];E=D//C;F=split_heads(X@np.asarray(W_q),C);G=split_heads(X@np.asarray(W_k),C);H=split_heads(X@np.asarray(W_v),C);A=F@np.swapaxes(G,-1,-2)/math.sqrt(E)
	if mask is not _A:A=np.where(np.asarray(mask).astype(bool),A,-1e9)
	A=A-A.max(axis=-1,keepdims=_B);B=np.exp(A);B=B/B.sum(axis=-1,keepdims=_B);I=B@H;J=merge_heads(I)@np.asarray(W_o);return J,B
if __name__==_C:
	rng=np.random.default_rng(0);B,T,d_model,h=2,5,8,2;X=rng.normal(size=(B,T,d_model));W_q,W_k,W_v,W_o=(rng.normal(size=(d_model,d_model))/math.sqrt(d_model)for A in range(4));causal=np.tril(np.ones((T,T),dtype=bool))
	try:out,w=multi_head_attention(X,W_q,W_k,W_v,W_o,h,mask=causal);print(_D,out.shape,_E,w.shape);print('rows sum to 1:',bool(np.allclose(w.sum(axis=-1),1.)));print('nothing above the diagonal:',bool(np.allclose(np.triu(w,k=1),.0)))
	except NotImplementedError as err:print(f"not implemented yet: {err}")
class MultiHeadAttention(nn.Module):
	'Multi-head self-attention with learned projections W_q, W_k, W_v, W_o.\n\n    Attributes:\n        W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model), with bias.\n\n    forward(x, mask=None):\n        q, k, v = W_q(x), W_k(x), W_v(x)            (B, T, d_model)\n        split into heads                            (B, h, T, d_head)\n        weights = softmax(q k^T / sqrt(d_head))     (B, h, T, T), blocked scores -> -1e9 first\n        heads   = weights @ v                       (B, h, T, d_head)\n        output  = W_o(merge(heads))                 (B, T, d_model)\n        returns (output, weights)\n    '
	def __init__(B,d_model,num_heads):
		C=num_heads;A=d_model;super().__init__()
		if A%C:raise ValueError(f"d_model={A} is not divisible by num_heads={C}")
		B.d_model=A;B.num_heads=C;B.d_head=A//C;B.W_q=nn.Linear(A,A);B.W_k=nn.Linear(A,A);B.W_v=nn.Linear(A,A);B.W_o=nn.Linear(A,A)
	def forward(A,x,mask=_A):
		'x: (B, T, d_model); mask: None or broadcastable to (B, h, T, T), 1/True = may attend.\n\n        Returns (output (B, T, d_model), weights (B, h, T, T)).\n        ';E,F,O=x.shape;G,C=A.num_heads,A.d_head
		def D(t):return t.view(E,F,G,C).transpose(1,2)
		I,J,K=D(A.W_q(x)),D(A.W_k(x)),D(A.W_v(x));B=I@J.transpose(-2,-1)/math.sqrt(C)
		if mask is not _A:L=torch.as_tensor(mask,device=B.device).bool();B=B.masked_fill(~L,-1e9)
		H=torch.softmax(B,dim=-1);M=H@K;N=M.transpose(1,2).reshape(E,F,G*C);return A.W_o(N),H
if __name__==_C:
	import matplotlib.pyplot as plt;torch.manual_seed(0);B,T,d_model,h=2,5,8,2;x=3*torch.randn(B,T,d_model);causal=torch.tril(torch.ones(T,T,dtype=torch.bool))
	try:
		mine=MultiHeadAttention(d_model,h);out,w=mine(x,mask=causal);print(_D,tuple(out.shape),_E,tuple(w.shape));theirs=nn.MultiheadAttention(d_model,h,batch_first=_B)
		with torch.no_grad():theirs.in_proj_weight.copy_(torch.cat([mine.W_q.weight,mine.W_k.weight,mine.W_v.weight]));theirs.in_proj_bias.copy_(torch.cat([mine.W_q.bias,mine.W_k.bias,mine.W_v.bias]));theirs.out_proj.weight.copy_(mine.W_o.weight);theirs.out_proj.bias.copy_(mine.W_o.bias)
		ref_out,ref_w=theirs(x,x,x,attn_mask=~causal,average_attn_weights=False);print('output matches torch:',torch.allclose(out,ref_out,rtol=.0001,atol=1e-05));print('weights match torch:',torch.allclose(w,ref_w,rtol=.0001,atol=1e-05));fig,axes=plt.subplots(1,h,figsize=(4*h,3.6),constrained_layout=_B)
		for(head,ax)in enumerate(np.atleast_1d(axes)):image=ax.imshow(w[0,head].detach().numpy(),cmap='viridis',vmin=0,vmax=1);ax.set_xlabel('key position');ax.set_title(f"head {head}")
		np.atleast_1d(axes)[0].set_ylabel('query position');fig.suptitle('each head weighs the past differently (causal mask, untrained weights)');fig.colorbar(image,ax=axes,shrink=.8);plt.show()
	except NotImplementedError as err:print(f"not implemented yet: {err}")
