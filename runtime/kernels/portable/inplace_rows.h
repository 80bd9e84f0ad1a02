/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: a depthwise convolution that writes its output over its input
 * (the memory plan puts the output at the input's address where the kernels allow it:
 * kernels.yaml, inplace_keep). Private to this folder.
 *
 * The output rows are written in order, each over the bytes of the input rows it covers.
 * Before output row o is written (the images' rows counted one after another), every
 * input row those bytes cover that output rows from o on still read is copied into a ring
 * of input rows in the operator's scratch; a row is then read from the ring once copied,
 * from the input before. The ring holds, at the most, the rows from the first still read
 * to the last covered: tvmk_rows_needed, which tvmdev's planner computes the same way
 * (tvmdev/model/scratch.py, ring_rows) to size the scratch. Apart (output != input), the
 * ring is not used and no scratch is needed.
 */
#ifndef TVMK_PORTABLE_INPLACE_ROWS_H_
#define TVMK_PORTABLE_INPLACE_ROWS_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What the ring needs of a depthwise convolution's params. */
struct tvmk_rows_shape {
    int32_t N, H, W, C, OH, OW, mult;
    int32_t KH, stride_h, pad_top, dil_h;
    size_t elem; /* bytes of an element */
};

/* The shape of the params `p` of a depthwise convolution (float or integer), elements of
 * `elem` bytes. */
#define TVMK_ROWS_SHAPE(shape, p, elem_bytes)                                                \
    do {                                                                                     \
        (shape).N = (p)->N;                                                                  \
        (shape).H = (p)->H;                                                                  \
        (shape).W = (p)->W;                                                                  \
        (shape).C = (p)->C;                                                                  \
        (shape).OH = (p)->OH;                                                                \
        (shape).OW = (p)->OW;                                                                \
        (shape).mult = (p)->mult;                                                            \
        (shape).KH = (p)->KH;                                                                \
        (shape).stride_h = (p)->stride_h;                                                    \
        (shape).pad_top = (p)->pad_top;                                                      \
        (shape).dil_h = (p)->dil_h;                                                          \
        (shape).elem = (elem_bytes);                                                         \
    } while (0)

struct tvmk_rows {
    const uint8_t *input;
    uint8_t *ring;    /* NULL: the output is apart from the input */
    int32_t count;    /* rows the ring holds */
    size_t row_in;    /* bytes of an input row */
    size_t row_out;   /* bytes of an output row */
    int32_t next;     /* the first input row neither copied nor passed over */
    int32_t total;    /* input rows of every image */
};

/* The first input row (of its image) that output rows oy.. of the image read, or H:
 * none. With dilation a later row may read an earlier input row (it starts in the top
 * padding); from the first row clear of the padding on, each starts stride_h rows on. */
static inline int32_t tvmk_rows_first(const struct tvmk_rows_shape *s, int32_t oy)
{
    const int32_t clear = (s->pad_top + s->stride_h - 1) / s->stride_h;
    int32_t o, k, least = s->H;
    for (o = oy; o <= (clear > oy ? clear : oy) && o < s->OH; ++o) {
        for (k = 0; k < s->KH; ++k) {
            const int32_t y = o * s->stride_h - s->pad_top + k * s->dil_h;
            if (y >= 0 && y < s->H) {
                least = y < least ? y : least;
                break;
            }
        }
    }
    return least;
}

/* The input row the bytes of output rows 0..g end in (g counts every image's rows). */
static inline int32_t tvmk_rows_covered(const struct tvmk_rows *r, int32_t g)
{
    const int64_t last = ((int64_t)g + 1) * (int64_t)r->row_out - 1;
    const int64_t row = r->row_in == 0 ? -1 : last / (int64_t)r->row_in;
    return row < (int64_t)r->total - 1 ? (int32_t)row : r->total - 1;
}

/* The rows the ring must hold for this convolution in place (0: none). */
static inline int32_t tvmk_rows_needed(const struct tvmk_rows_shape *s)
{
    struct tvmk_rows r;
    int32_t g, most = 0;
    r.row_in = (size_t)s->W * (size_t)s->C * s->elem;
    r.row_out = (size_t)s->OW * (size_t)s->C * (size_t)s->mult * s->elem;
    r.total = s->N * s->H;
    for (g = 0; g < s->N * s->OH; ++g) {
        const int32_t first = g / s->OH * s->H + tvmk_rows_first(s, g % s->OH);
        const int32_t held = tvmk_rows_covered(&r, g) - first + 1;
        most = held > most ? held : most;
    }
    return most;
}

/* Sets up the ring for a call: in place when output == input, then with the scratch
 * (scratch_bytes of it) as the ring. Returns 0, or -1 when the scratch is too small. */
static inline int tvmk_rows_init(struct tvmk_rows *r, const void *input, const void *output,
                                 const struct tvmk_rows_shape *s, void *scratch,
                                 int32_t scratch_bytes)
{
    r->input = (const uint8_t *)input;
    r->ring = NULL;
    r->count = 0;
    r->row_in = (size_t)s->W * (size_t)s->C * s->elem;
    r->row_out = (size_t)s->OW * (size_t)s->C * (size_t)s->mult * s->elem;
    r->next = 0;
    r->total = s->N * s->H;
    if (output != input) {
        return 0;
    }
    r->count = tvmk_rows_needed(s);
    if (r->count > 0) {
        if (scratch == NULL || scratch_bytes < 0 ||
            (size_t)scratch_bytes < (size_t)r->count * r->row_in) {
            return -1;
        }
        r->ring = (uint8_t *)scratch;
    }
    return 0;
}

/* Before output row g is written: the input rows its bytes cover that rows from g on
 * still read (from input row `first` on, every image's rows counted) into the ring. */
static inline void tvmk_rows_keep(struct tvmk_rows *r, int32_t g, int32_t first)
{
    int32_t last;
    if (r->ring == NULL) {
        return;
    }
    last = tvmk_rows_covered(r, g);
    for (; r->next <= last; ++r->next) {
        if (r->next >= first) {
            memcpy(r->ring + (size_t)(r->next % r->count) * r->row_in,
                   r->input + (size_t)r->next * r->row_in, r->row_in);
        }
    }
}

/* Input row y of image n: from the ring once copied there, else from the input. */
static inline const void *tvmk_rows_at(const struct tvmk_rows *r, int32_t n, int32_t h,
                                       int32_t y)
{
    const int32_t g = n * h + y;
    if (r->ring != NULL && g < r->next) {
        return r->ring + (size_t)(g % r->count) * r->row_in;
    }
    return r->input + (size_t)g * r->row_in;
}

#endif /* TVMK_PORTABLE_INPLACE_ROWS_H_ */
