/*
 * Answers questions about the plain-C half of tvmdev's Metal kernels (tvmk_metal.h), so
 * that tests/test_metal.py can compare it with tvmdev/metal.py. One question per line on
 * stdin, one answer per line on stdout:
 *   choose M HAS_DEVICE METAL4 CROSSOVER  ->  the kernel (0 portable, 1 simdgroup, 2 matmul2d)
 *   grid KERNEL M N                       ->  X Y (threadgroups along N and M)
 *   tgbytes ELEMENT_SIZE                  ->  the simdgroup kernel's threadgroup memory
 *   constants                             ->  THREADS SG_TILE_M SG_TILE_N SG_TILE_K MM_TILE_M MM_TILE_N
 */
#include <stdio.h>
#include <string.h>

#include "tvmk_metal.h"

int main(void)
{
    char line[256];
    char word[32];

    while (fgets(line, sizeof(line), stdin) != NULL) {
        long a, b, c, d;

        if (sscanf(line, "%31s", word) != 1) {
            continue;
        }
        if (strcmp(word, "choose") == 0 &&
            sscanf(line, "%*s %ld %ld %ld %ld", &a, &b, &c, &d) == 4) {
            printf("%d\n", (int)tvmk_metal_gemm_choose((int32_t)a, (int)b, (int)c, (int32_t)d));
        } else if (strcmp(word, "grid") == 0 &&
                   sscanf(line, "%*s %ld %ld %ld", &a, &b, &c) == 3) {
            struct tvmk_metal_grid g =
                tvmk_metal_gemm_grid((enum tvmk_metal_gemm_kernel)a, (int32_t)b, (int32_t)c);
            printf("%lu %lu\n", (unsigned long)g.x, (unsigned long)g.y);
        } else if (strcmp(word, "tgbytes") == 0 && sscanf(line, "%*s %ld", &a) == 1) {
            printf("%lu\n", (unsigned long)tvmk_metal_simdgroup_threadgroup_bytes((uint32_t)a));
        } else if (strcmp(word, "constants") == 0) {
            printf("%d %d %d %d %d %d\n", TVMK_METAL_THREADS, TVMK_METAL_SIMDGROUP_TILE_M,
                   TVMK_METAL_SIMDGROUP_TILE_N, TVMK_METAL_SIMDGROUP_TILE_K,
                   TVMK_METAL_MATMUL2D_TILE_M, TVMK_METAL_MATMUL2D_TILE_N);
        } else {
            printf("?\n");
        }
    }
    return 0;
}
