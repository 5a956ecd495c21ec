# solutions/scaling.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_D='__main__'
_C='max_weight'
_B='entropy'
_A='std'
import math,matplotlib.pyplot as plt,numpy as np
def scaling_experiment(dims=(4,16,64,256),seq_len=4,n_trials=1000,seed=0):
	'Measure how the spread of Q K^T and the peakedness of its softmax grow with d.\n\n    For each d: Q, K ~ N(0, 1) of shape (seq_len, d), n_trials times;\n    S = Q K^T (unscaled) and S / sqrt(d) (scaled), each (seq_len, seq_len);\n    per trial: std of S, mean row entropy -sum p ln p of softmax(S), mean row max of\n    softmax(S); each averaged over the trials. Expect std_unscaled ~ sqrt(d), std_scaled ~ 1.\n\n    Args:\n        dims: the dimensions d to try.\n        seq_len: number of queries and of keys per trial.\n        n_trials: number of random draws per dimension.\n        seed: seed of ``np.random.default_rng``.\n\n    Returns:\n        {d: {"std_unscaled", "std_scaled", "entropy_unscaled", "entropy_scaled",\n             "max_weight_unscaled", "max_weight_scaled"}} with int keys and float values.\n    ';K='scaled';J='unscaled';E=n_trials;D=seq_len;F=np.random.default_rng(seed);G={}
	for B in dims:
		L=F.standard_normal((E,D,B));M=F.standard_normal((E,D,B));H=L@M.transpose(0,2,1);I={}
		for(N,C)in((J,H),(K,H/math.sqrt(B))):O=C-C.max(axis=-1,keepdims=True);A=np.exp(O);A/=A.sum(axis=-1,keepdims=True);P=np.log(np.where(A>0,A,1.));Q=-(A*P).sum(axis=-1);I[N]={_A:float(C.std(axis=(1,2)).mean()),_B:float(Q.mean()),_C:float(A.max(axis=-1).mean())}
		G[int(B)]={f"{A}_{B}":I[B][A]for A in(_A,_B,_C)for B in(J,K)}
	return G
if __name__==_D:
	try:
		results=scaling_experiment();print(f"{'d':>5} {'sqrt(d)':>8} {_A:>7} {'std/sqrt':>9} {'H':>7} {'H/sqrt':>8} {'max w':>7} {'max w/sqrt':>10}")
		for(d,r)in results.items():print(f"{d:>5} {math.sqrt(d):>8.2f} {r['std_unscaled']:>7.3f} {r['std_scaled']:>9.3f} {r['entropy_unscaled']:>7.3f} {r['entropy_scaled']:>8.3f} {r['max_weight_unscaled']:>7.3f} {r['max_weight_scaled']:>10.3f}")
	except NotImplementedError as err:print(f"not implemented yet: {err}")
def plot_scaling(results):
	'Plot the output of ``scaling_experiment`` against d, scaled vs unscaled.\n\n    One panel per statistic (std of the scores, row entropy, largest weight), each with\n    a labelled "unscaled" and a labelled "scaled" series over x = d.\n\n    Args:\n        results: {d: {statistic_name: value}} as returned by ``scaling_experiment``.\n\n    Returns:\n        The matplotlib Figure (labelled axes, titles and legends).\n    ';C=results;B=sorted(C);F=[(_A,'std of the scores','spread of the scores'),(_B,'mean row entropy (nats)','how spread out the weights are'),(_C,'mean largest weight','how peaked the weights are')];D,G=plt.subplots(1,len(F),figsize=(14,4))
	for(A,(E,H,I))in zip(G,F):
		A.plot(B,[C[A][f"{E}_unscaled"]for A in B],'o-',label='unscaled: $QK^\\top$');A.plot(B,[C[A][f"{E}_scaled"]for A in B],'s-',label='scaled: $QK^\\top/\\sqrt{d}$')
		if E==_A:A.plot(B,[math.sqrt(A)for A in B],'k:',label='$\\sqrt{d}$')
		A.set_xscale('log',base=2);A.set_xticks(B,[str(A)for A in B]);A.set_xlabel('d (dimension of queries and keys)');A.set_ylabel(H);A.set_title(I);A.legend()
	D.suptitle('Scaling by sqrt(d) keeps the softmax out of saturation');D.tight_layout();return D
if __name__==_D:
	try:figure=plot_scaling(scaling_experiment());plt.show()
	except NotImplementedError as err:print(f"not implemented yet: {err}")
