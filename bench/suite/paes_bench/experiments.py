"""The experiments in the order they run and appear in tables.md: id -> module (SEED, TITLE, run, section)."""

from . import exp_a_threads, exp_b_amdahl, exp_c_sizes, exp_d_mpi, exp_e_gpu, exp_f_peers

EXPERIMENTS = {
    "a": exp_a_threads,
    "b": exp_b_amdahl,
    "c": exp_c_sizes,
    "d": exp_d_mpi,
    "e": exp_e_gpu,
    "f": exp_f_peers,
}
