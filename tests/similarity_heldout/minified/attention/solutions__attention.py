# solutions/attention.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_B='row sums:'
_A='__main__'
import math,numpy as np
def softmax(x,axis=-1):
	'Numerically stable softmax of ``x`` along ``axis``.\n\n    softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),  with m = max_j x_j along ``axis``;\n    subtracting m leaves the result unchanged and keeps every exp() at most 1.\n\n    Args:\n        x: array of any shape (floats).\n        axis: the axis to normalise over; -1, the last axis, by default.\n\n    Returns:\n        An array of the same shape as ``x`` whose slices along ``axis`` are positive\n        and sum to 1. Finite for inputs as large as 1e4.\n    ';x=np.asarray(x)
	if not np.issubdtype(x.dtype,np.floating):x=x.astype(np.float64)
	B=x-np.max(x,axis=axis,keepdims=True);A=np.exp(B);return A/np.sum(A,axis=axis,keepdims=True)
if __name__==_A:
	try:x=np.array([[1.,2.,3.],[1e3,1e3,1e3],[1e4,.0,-1e4]]);p=softmax(x);print('softmax of each row:\n',p.round(4));print(_B,p.sum(axis=-1));print('all finite:',bool(np.isfinite(p).all()));print('columns instead (axis=0) sum to:',softmax(x,axis=0).sum(axis=0))
	except NotImplementedError as err:print(f"not implemented yet: {err}")
def scaled_dot_product_attention(Q,K,V,mask=None):
	'Scaled dot-product attention: softmax(Q K^T / sqrt(d_k)) V.\n\n    scores  = Q @ K^T / sqrt(d_k)                       (..., n_q, n_k)\n    scores  = where(mask, scores, -1e9)  if mask given  (blocked entries before softmax)\n    weights = softmax(scores) over the key axis          (..., n_q, n_k), rows sum to 1\n    output  = weights @ V                                (..., n_q, d_v)\n\n    Args:\n        Q: queries, shape (..., n_q, d_k).\n        K: keys, shape (..., n_k, d_k).\n        V: values, shape (..., n_k, d_v).\n        mask: None, or an array broadcastable to (..., n_q, n_k) holding 1/True where a\n            query may attend to a key and 0/False where it is blocked.\n\n    Returns:\n        (output, weights) with output of shape (..., n_q, d_v) and weights of shape\n        (..., n_q, n_k). Leading batch dimensions are optional and arbitrary.\n    ';Q,K,V=np.asarray(Q),np.asarray(K),np.asarray(V);C=Q.shape[-1];A=Q@np.swapaxes(K,-1,-2)/math.sqrt(C)
	if mask is not None:D=np.asarray(mask).astype(bool);A=np.where(D,A,-1e9)
	B=softmax(A,axis=-1);E=B@V;return E,B
if __name__==_A:
	import matplotlib.pyplot as plt;tokens=['the','cat','sat','down','<pad>','<pad>'];rng=np.random.default_rng(7);X=rng.normal(size=(len(tokens),8));padding=np.array([[1,1,1,1,0,0]])
	try:
		out,w=scaled_dot_product_attention(X,X,X);out_masked,w_masked=scaled_dot_product_attention(X,X,X,mask=padding);print('output:',out.shape,' weights:',w.shape);print(_B,w.sum(axis=-1).round(6));print('weight on padding keys, masked:',float(w_masked[:,4:].max()));fig,axes=plt.subplots(1,2,figsize=(10,4.2),constrained_layout=True)
		for(ax,weights,title)in[(axes[0],w,'no mask'),(axes[1],w_masked,'padding masked')]:image=ax.imshow(weights,cmap='viridis',vmin=0,vmax=1);ax.set_xticks(range(len(tokens)),tokens,rotation=45);ax.set_yticks(range(len(tokens)),tokens);ax.set_xlabel('key (attended to)');ax.set_title(f"attention weights, {title}")
		axes[0].set_ylabel('query (attending)');fig.colorbar(image,ax=axes,shrink=.8);plt.show()
	except NotImplementedError as err:print(f"not implemented yet: {err}")
