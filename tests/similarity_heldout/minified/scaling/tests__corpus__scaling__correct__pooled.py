# tests/corpus/scaling/correct/pooled.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
import math,matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt,numpy as np
def _softmax(s):A=np.exp(s-s.max(axis=-1,keepdims=True));return A/A.sum(axis=-1,keepdims=True)
def _stats(scores):B=scores;A=_softmax(B);C=-(A*np.log(np.clip(A,1e-300,None))).sum(axis=-1).mean();return float(B.std()),float(C),float(A.max(axis=-1).mean())
def scaling_experiment(dims=(4,16,64,256),seq_len=4,n_trials=1000,seed=0):
	C=n_trials;B=seq_len;D=np.random.default_rng(seed);E={}
	for A in dims:G=D.standard_normal((C,B,A));H=D.standard_normal((C,B,A));F=G@H.transpose(0,2,1);I,J,K=_stats(F);L,M,N=_stats(F/math.sqrt(A));E[A]={'std_unscaled':I,'std_scaled':L,'entropy_unscaled':J,'entropy_scaled':M,'max_weight_unscaled':K,'max_weight_scaled':N}
	return E
def plot_scaling(results):
	C=results;B=sorted(C);E,F=plt.subplots(1,2,figsize=(10,4))
	for(A,D)in zip(F,('std','entropy')):A.plot(B,[C[A][f"{D}_unscaled"]for A in B],'o-',label='unscaled');A.plot(B,[C[A][f"{D}_scaled"]for A in B],'s-',label='scaled by 1/sqrt(d)');A.set_xscale('log');A.set_xlabel('d');A.set_ylabel(D);A.legend()
	E.suptitle('Why we scale by sqrt(d)');return E
