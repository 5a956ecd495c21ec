# tests/similarity_heldout/honest/causal_mask/index_compare.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
import numpy as np
def create_causal_mask(seq_len):A=seq_len;B,C=np.indices((A,A));return C<=B
def _softmax_last(z):z=z-np.max(z,axis=-1,keepdims=True);A=np.exp(z);return A/np.sum(A,axis=-1,keepdims=True)
def causal_attention(Q,K,V):Q=np.asarray(Q,dtype=np.float64);K=np.asarray(K,dtype=np.float64);C=Q.shape[-2];A=np.einsum('...qd,...kd->...qk',Q,K)/np.sqrt(Q.shape[-1]);A[...,~create_causal_mask(C)]=-np.inf;B=_softmax_last(A);return np.einsum('...qk,...kd->...qd',B,np.asarray(V,dtype=np.float64)),B
