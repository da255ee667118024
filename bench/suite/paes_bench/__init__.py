"""paes benchmark suite (bench/suite/run_suite.py is its command).

runner     running and timing commands (the one median helper; bench/lib.sh times through it too)
machine    the machine description written beside the figures
suite      the run: profiles, scratch files, paes candidates, the driver over the experiments
exp_*      one module per experiment, each naming the seed table or figure it mirrors
report     results.json, results.csv and tables.md; plots: the PNG figures
"""
