# Work over fixed chunks of a range [0, n): chunk c is [c * chunk, min(n, (c + 1) * chunk)),
# whatever the number of threads, so results are bitwise the same for any thread count.
#
#     from skylite.prox._fixed_chunks cimport chunked_sum
#     total = chunked_sum(my_chunk_sum, &my_data, n, 1024, n_threads)
#
# chunk_sum(data, start, stop) sums the terms start..stop-1 in a fixed order (it runs on any
# thread, concurrently with the other chunks, and must only read `data`); chunked_sum adds the
# chunks' sums in order 0, 1, ...  Python code uses `map_chunks` (the .pyx) for the same
# partition.

ctypedef double (*ChunkSum)(const void *data, Py_ssize_t start,
                            Py_ssize_t stop) noexcept nogil

# sum over the chunks of [0, n) of chunk_sum(data, start, stop), in chunk order, the chunks
# computed on n_threads OpenMP threads; 0 for n <= 0, NaN if the partial sums cannot be
# allocated
cdef double chunked_sum(ChunkSum chunk_sum, const void *data, Py_ssize_t n, Py_ssize_t chunk,
                        int n_threads) noexcept nogil
