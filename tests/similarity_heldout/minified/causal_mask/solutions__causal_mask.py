# solutions/causal_mask.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_C='query position i'
_B='key position j'
_A='__main__'
import math,numpy as np
def create_causal_mask(seq_len):'The causal (look-back-only) mask for a sequence of ``seq_len`` positions.\n\n    mask[i, j] = 1/True  if j <= i   (key j is at or before query i: allowed)\n    mask[i, j] = 0/False if j >  i   (key j is in the future: blocked)\n\n    Args:\n        seq_len: number of positions T.\n\n    Returns:\n        An array of shape (T, T), lower-triangular including the diagonal.\n    ';A=seq_len;return np.tril(np.ones((A,A),dtype=bool))
if __name__==_A:
	import matplotlib.pyplot as plt
	try:mask=create_causal_mask(6);print(np.asarray(mask).astype(int));fig,ax=plt.subplots(figsize=(3.6,3.6));ax.imshow(np.asarray(mask).astype(float),cmap='Greys_r',vmin=0,vmax=1);ax.set_xlabel(_B);ax.set_ylabel(_C);ax.set_title('causal mask (white = may attend)');plt.show()
	except NotImplementedError as err:print(f"not implemented yet: {err}")
def causal_attention(Q,K,V):'Scaled dot-product attention in which position i attends only to positions <= i.\n\n    scores  = Q @ K^T / sqrt(d)                        (..., T, T)\n    scores  = -inf where j > i (the causal mask)       before the softmax\n    weights = softmax(scores) over the key axis         (..., T, T), zero above the diagonal\n    output  = weights @ V                               (..., T, d_v)\n\n    Args:\n        Q: queries, shape (..., T, d).\n        K: keys, shape (..., T, d).\n        V: values, shape (..., T, d_v).\n\n    Returns:\n        (output, weights): output (..., T, d_v); weights (..., T, T), rows summing to 1\n        and exactly 0 above the diagonal.\n    ';Q,K,V=np.asarray(Q),np.asarray(K),np.asarray(V);D,E=Q.shape[-2],Q.shape[-1];A=Q@np.swapaxes(K,-1,-2)/math.sqrt(E);F=create_causal_mask(D);A=np.where(F,A,-np.inf);A=A-A.max(axis=-1,keepdims=True);B=np.exp(A);C=B/B.sum(axis=-1,keepdims=True);G=C@V;return G,C
if __name__==_A:
	import matplotlib.pyplot as plt;rng=np.random.default_rng(3);T,d=6,4;Q,K,V=(rng.normal(size=(T,d))for A in range(3))
	try:out,w=causal_attention(Q,K,V);print('output:',out.shape,' weights:',w.shape);print('largest weight above the diagonal:',float(np.abs(np.triu(w,k=1)).max()));print('row sums:',w.sum(axis=-1).round(6));V_changed=V.copy();V_changed[-1]+=1e1;out_changed,_=causal_attention(Q,K,V_changed);same_past=np.allclose(out[:-1],out_changed[:-1]);print('past outputs unchanged when the last value changes:',bool(same_past));fig,ax=plt.subplots(figsize=(4.2,3.6));image=ax.imshow(w,cmap='viridis',vmin=0,vmax=1);ax.set_xlabel(_B);ax.set_ylabel(_C);ax.set_title('causal attention weights');fig.colorbar(image,ax=ax);plt.show()
	except NotImplementedError as err:print(f"not implemented yet: {err}")
