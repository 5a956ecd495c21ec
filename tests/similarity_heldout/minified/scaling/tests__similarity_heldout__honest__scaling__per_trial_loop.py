# tests/similarity_heldout/honest/scaling/per_trial_loop.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_C='max_weight_scaled'
_B='max_weight_unscaled'
_A=.0
import math,matplotlib.pyplot as plt,numpy as np
def row_softmax(m):
	B=np.empty_like(m)
	for A in range(m.shape[0]):C=np.exp(m[A]-m[A].max());B[A]=C/C.sum()
	return B
def entropy_of_rows(w):
	A=_A
	for B in w:A+=-sum(A*math.log(A)for A in B if A>0)
	return A/len(w)
def scaling_experiment(dims=(4,16,64,256),seq_len=4,n_trials=1000,seed=0):
	E=n_trials;D=seq_len;F=np.random.default_rng(seed);G={}
	for A in dims:
		B={'std_unscaled':_A,'std_scaled':_A,'entropy_unscaled':_A,'entropy_scaled':_A,_B:_A,_C:_A}
		for M in range(E):
			K=F.normal(_A,1.,size=(D,A));L=F.normal(_A,1.,size=(D,A));H=K@L.T
			for(C,I)in(('unscaled',H),('scaled',H/math.sqrt(A))):J=row_softmax(I);B['std_'+C]+=I.std();B['entropy_'+C]+=entropy_of_rows(J);B['max_weight_'+C]+=J.max(axis=1).mean()
		G[A]={A:float(B/E)for(A,B)in B.items()}
	return G
def plot_scaling(results):B=results;A=sorted(B);C=plt.figure(figsize=(6,4));plt.plot(A,[B[A][_B]for A in A],'r-o',label='max weight, unscaled');plt.plot(A,[B[A][_C]for A in A],'b-o',label='max weight, scaled');plt.xlabel('d');plt.ylabel('max weight');plt.title('Largest attention weight as d grows');plt.legend();return C
