/* SPDX-License-Identifier: Apache-2.0 */
/* The co-processor link's framing (protocol.h describes the format). */
#include "protocol.h"

#include <stddef.h>
#include <string.h>

uint16_t tvmdev_coproc_crc16(uint16_t crc, const uint8_t *data, uint32_t n)
{
    uint32_t i;
    int bit;

    for (i = 0; i < n; i++) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (bit = 0; bit < 8; bit++) {
            crc = (crc & 0x8000U) ? (uint16_t)((crc << 1) ^ 0x1021U) : (uint16_t)(crc << 1);
        }
    }
    return crc;
}

uint32_t tvmdev_coproc_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

void tvmdev_coproc_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

uint32_t tvmdev_coproc_encode(uint8_t *out, uint8_t type, uint8_t seq, const void *head,
                              uint32_t hn, const void *tail, uint32_t tn)
{
    uint32_t n = hn + tn;
    uint16_t crc;

    if (n > TVMDEV_COPROC_MAX_PAYLOAD || hn > n) {
        return 0U;
    }
    out[0] = TVMDEV_COPROC_SYNC;
    out[1] = type;
    out[2] = seq;
    out[3] = (uint8_t)n;
    out[4] = (uint8_t)(n >> 8);
    if (hn != 0U) {
        memcpy(out + TVMDEV_COPROC_HEADER, head, hn);
    }
    if (tn != 0U) {
        memcpy(out + TVMDEV_COPROC_HEADER + hn, tail, tn);
    }
    crc = tvmdev_coproc_crc16(0xFFFFU, out + 1, TVMDEV_COPROC_HEADER - 1U + n);
    out[TVMDEV_COPROC_HEADER + n] = (uint8_t)crc;
    out[TVMDEV_COPROC_HEADER + n + 1U] = (uint8_t)(crc >> 8);
    return TVMDEV_COPROC_HEADER + n + TVMDEV_COPROC_TRAILER;
}

void tvmdev_coproc_decoder_reset(struct tvmdev_coproc_decoder *d)
{
    d->len = 0U;
    d->returned = 0U;
}

/* Drop the buffer's first byte and everything up to the next sync byte. */
static void resync(struct tvmdev_coproc_decoder *d)
{
    uint32_t from = 1U;

    while (from < d->len && d->buf[from] != TVMDEV_COPROC_SYNC) {
        from++;
    }
    d->skipped += from - 1U;
    memmove(d->buf, d->buf + from, d->len - from);
    d->len -= from;
}

/* Look at what is buffered: a frame, not yet, or a bad frame (dropped). */
static int32_t parse(struct tvmdev_coproc_decoder *d, struct tvmdev_coproc_frame *frame)
{
    uint32_t n, total;
    uint16_t crc;

    if (d->len == 0U) {
        return TVMDEV_COPROC_MORE;
    }
    if (d->buf[0] != TVMDEV_COPROC_SYNC) {
        return TVMDEV_COPROC_BAD; /* what a consumed frame left starts mid-garbage */
    }
    if (d->len < TVMDEV_COPROC_HEADER) {
        return TVMDEV_COPROC_MORE;
    }
    n = (uint32_t)d->buf[3] | ((uint32_t)d->buf[4] << 8);
    if (n > TVMDEV_COPROC_MAX_PAYLOAD) {
        return TVMDEV_COPROC_BAD;
    }
    total = TVMDEV_COPROC_HEADER + n + TVMDEV_COPROC_TRAILER;
    if (d->len < total) {
        return TVMDEV_COPROC_MORE;
    }
    crc = tvmdev_coproc_crc16(0xFFFFU, d->buf + 1, TVMDEV_COPROC_HEADER - 1U + n);
    if (d->buf[total - 2U] != (uint8_t)crc || d->buf[total - 1U] != (uint8_t)(crc >> 8)) {
        return TVMDEV_COPROC_BAD;
    }
    frame->type = d->buf[1];
    frame->seq = d->buf[2];
    frame->length = (uint16_t)n;
    frame->payload = d->buf + TVMDEV_COPROC_HEADER;
    return TVMDEV_COPROC_FRAME;
}

int32_t tvmdev_coproc_feed(struct tvmdev_coproc_decoder *d, uint8_t byte,
                           struct tvmdev_coproc_frame *frame)
{
    int32_t result = TVMDEV_COPROC_MORE;
    int32_t r;

    /* A frame returned last time is consumed now: its bytes leave the buffer (after a
     * resync, bytes of the next frame may follow them). */
    if (d->returned != 0U) {
        uint32_t total = TVMDEV_COPROC_HEADER + ((uint32_t)d->buf[3] | ((uint32_t)d->buf[4] << 8)) +
                         TVMDEV_COPROC_TRAILER;

        memmove(d->buf, d->buf + total, d->len - total);
        d->len -= total;
        d->returned = 0U;
    }
    if (d->len == 0U && byte != TVMDEV_COPROC_SYNC) {
        d->skipped++;
        return TVMDEV_COPROC_MORE;
    }
    d->buf[d->len++] = byte;
    /* After a bad frame, the bytes after its sync byte may hold the start of a good one. */
    while ((r = parse(d, frame)) == TVMDEV_COPROC_BAD) {
        d->bad_frames++;
        result = TVMDEV_COPROC_BAD;
        resync(d);
    }
    if (r == TVMDEV_COPROC_FRAME) {
        d->frames++;
        d->returned = 1U;
        return TVMDEV_COPROC_FRAME;
    }
    return result;
}

uint32_t tvmdev_coproc_job_encode(uint8_t *out, uint16_t kernel,
                                  const struct tvmdev_coproc_job *job, uint32_t channels,
                                  const int32_t *multiplier, const int32_t *shift)
{
    const uint32_t words[TVMDEV_COPROC_JOB_WORDS] = {
        job->input, job->weights, job->bias, job->output, job->scratch, job->scratch_bytes,
        (uint32_t)job->N, (uint32_t)job->C, (uint32_t)job->H, (uint32_t)job->W,
        (uint32_t)job->KH, (uint32_t)job->KW, (uint32_t)job->OH, (uint32_t)job->OW,
        (uint32_t)job->stride_h, (uint32_t)job->stride_w, (uint32_t)job->pad_top,
        (uint32_t)job->pad_left, (uint32_t)job->dil_h, (uint32_t)job->dil_w,
        (uint32_t)job->M_or_mult, (uint32_t)job->group, (uint32_t)job->input_offset,
        (uint32_t)job->output_offset, (uint32_t)job->activation_min,
        (uint32_t)job->activation_max};
    uint8_t *p = out + 4U;
    uint32_t i;

    if (channels > TVMDEV_COPROC_MAX_CHANNELS) {
        return 0U;
    }
    out[0] = (uint8_t)kernel;
    out[1] = (uint8_t)(kernel >> 8);
    out[2] = (uint8_t)channels;
    out[3] = (uint8_t)(channels >> 8);
    for (i = 0; i < TVMDEV_COPROC_JOB_WORDS; i++, p += 4) {
        tvmdev_coproc_put_u32(p, words[i]);
    }
    for (i = 0; i < channels; i++, p += 4) {
        tvmdev_coproc_put_u32(p, (uint32_t)multiplier[i]);
    }
    for (i = 0; i < channels; i++, p += 4) {
        tvmdev_coproc_put_u32(p, (uint32_t)shift[i]);
    }
    return (uint32_t)(p - out);
}

int32_t tvmdev_coproc_job_decode(const uint8_t *in, uint32_t n, uint16_t *kernel,
                                 struct tvmdev_coproc_job *job, int32_t *multiplier,
                                 int32_t *shift)
{
    uint32_t w[TVMDEV_COPROC_JOB_WORDS];
    uint32_t channels, i;
    const uint8_t *p = in + 4U;

    if (n < 4U + 4U * TVMDEV_COPROC_JOB_WORDS) {
        return TVMDEV_COPROC_E_FRAME;
    }
    channels = (uint32_t)in[2] | ((uint32_t)in[3] << 8);
    if (channels > TVMDEV_COPROC_MAX_CHANNELS ||
        n != 4U + 4U * TVMDEV_COPROC_JOB_WORDS + 8U * channels) {
        return TVMDEV_COPROC_E_FRAME;
    }
    *kernel = (uint16_t)(in[0] | (in[1] << 8));
    for (i = 0; i < TVMDEV_COPROC_JOB_WORDS; i++, p += 4) {
        w[i] = tvmdev_coproc_get_u32(p);
    }
    for (i = 0; i < channels; i++, p += 4) {
        multiplier[i] = (int32_t)tvmdev_coproc_get_u32(p);
    }
    for (i = 0; i < channels; i++, p += 4) {
        shift[i] = (int32_t)tvmdev_coproc_get_u32(p);
    }
    job->input = w[0];
    job->weights = w[1];
    job->bias = w[2];
    job->output = w[3];
    job->scratch = w[4];
    job->scratch_bytes = w[5];
    job->N = (int32_t)w[6];
    job->C = (int32_t)w[7];
    job->H = (int32_t)w[8];
    job->W = (int32_t)w[9];
    job->KH = (int32_t)w[10];
    job->KW = (int32_t)w[11];
    job->OH = (int32_t)w[12];
    job->OW = (int32_t)w[13];
    job->stride_h = (int32_t)w[14];
    job->stride_w = (int32_t)w[15];
    job->pad_top = (int32_t)w[16];
    job->pad_left = (int32_t)w[17];
    job->dil_h = (int32_t)w[18];
    job->dil_w = (int32_t)w[19];
    job->M_or_mult = (int32_t)w[20];
    job->group = (int32_t)w[21];
    job->input_offset = (int32_t)w[22];
    job->output_offset = (int32_t)w[23];
    job->activation_min = (int32_t)w[24];
    job->activation_max = (int32_t)w[25];
    return (int32_t)channels;
}
