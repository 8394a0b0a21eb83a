/* A plain C batch job: the same path as a CUDA job (files uploaded, make under Slurm, output fetched) without a GPU. */
#include <stdio.h>

int main(void) {
  long squares = 0;
  for (long i = 1; i <= 100; i++) squares += i * i;
  printf("hello from a Slurm batch job\n");
  printf("sum of the squares of 1..100 = %ld\n", squares);
  return 0;
}
