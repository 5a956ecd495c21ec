# tests/corpus/scaling/correct/ho12_pure_python_random.py, through python-minifier 3.4.0 (rename_locals, hoist_literals)
_B='std_scaled'
_A='std_unscaled'
import math,random,matplotlib.pyplot as plt
def _softmax(row):B=max(row);A=[math.exp(A-B)for A in row];C=sum(A);return[A/C for A in A]
def _std(values):A=values;B=sum(A)/len(A);return math.sqrt(sum((A-B)**2 for A in A)/len(A))
def scaling_experiment(dims=(4,16,64,256),seq_len=4,n_trials=1000,seed=0):
	E=n_trials;A=seq_len;F=random.Random(seed);G={}
	for B in dims:
		C=dict.fromkeys([_A,_B,'entropy_unscaled','entropy_scaled','max_weight_unscaled','max_weight_scaled'],.0)
		for N in range(E):
			J=[[F.gauss(0,1)for A in range(B)]for A in range(A)];K=[[F.gauss(0,1)for A in range(B)]for A in range(A)];L=[[sum(A*B for(A,B)in zip(A,B))for B in K]for A in J]
			for(D,M)in(('unscaled',1.),('scaled',math.sqrt(B))):H=[[A/M for A in A]for A in L];C['std_'+D]+=_std([B for A in H for B in A]);I=[_softmax(A)for A in H];C['entropy_'+D]+=sum(-sum(A*math.log(A)for A in A if A>0)for A in I)/A;C['max_weight_'+D]+=sum(max(A)for A in I)/A
		G[B]={A:B/E for(A,B)in C.items()}
	return G
def plot_scaling(results):
	E='log';B=results;C=sorted(B);F,A=plt.subplots()
	for D in(_A,_B):A.plot(C,[B[A][D]for A in C],marker='o',label=D.replace('_',' '))
	A.set_xscale(E);A.set_yscale(E);A.set_xlabel('d');A.set_ylabel('std of the scores');A.legend();return F
