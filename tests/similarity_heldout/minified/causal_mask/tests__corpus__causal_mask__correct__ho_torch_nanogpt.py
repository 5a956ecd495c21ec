# tests/corpus/causal_mask/correct/ho_torch_nanogpt.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
"Causal attention as in nanoGPT's CausalSelfAttention, one head, no dropout."
import math,torch,torch.nn.functional as F
def create_causal_mask(seq_len):A=seq_len;return torch.tril(torch.ones(A,A)).numpy()
def causal_attention(Q,K,V):C=torch.as_tensor(Q,dtype=torch.float64);D=torch.as_tensor(K,dtype=torch.float64);E=torch.as_tensor(V,dtype=torch.float64);A=C.size(-2);G=torch.tril(torch.ones(A,A)).view(1,1,A,A);B=C@D.transpose(-2,-1)*(1./math.sqrt(D.size(-1)));B=B.masked_fill(G[0,0,:A,:A]==0,float('-inf'));B=F.softmax(B,dim=-1);H=B@E;return H,B
