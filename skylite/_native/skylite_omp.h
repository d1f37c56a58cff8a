/* An OpenMP barrier callable from Cython: Cython has no `omp barrier`, and an orphaned
 * barrier binds to the innermost enclosing parallel region of the calling thread.  Without
 * OpenMP the pragma is ignored, as it should be: one thread needs no barrier. */
#ifndef SKYLITE_OMP_H
#define SKYLITE_OMP_H

static inline void sky_omp_barrier(void)
{
#pragma omp barrier
}

#endif
