# Cython declaration of skylite_omp.h: a barrier among the threads of the enclosing
# `with parallel()` block.
cdef extern from "skylite_omp.h" nogil:
    void sky_omp_barrier()
