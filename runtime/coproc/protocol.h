/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The co-processor link: a small framed protocol over a byte stream (a UART), shared by
 * the main board's driver (examples/uart_npu) and the co-processor's firmware
 * (runtime/coproc/firmware.c). Both ends encode and decode with this file.
 *
 * A frame:
 *
 *   offset  size  field
 *   0       1     sync, 0xA5
 *   1       1     type (below)
 *   2       1     seq: the requester's sequence number; an answer repeats its request's
 *   3       2     length n of the payload, little-endian, at most TVMDEV_COPROC_MAX_PAYLOAD
 *   5       n     payload (multi-byte fields little-endian)
 *   5 + n   2     CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no
 *                 final XOR) of bytes 1 .. 5 + n - 1 (type to the end of the payload),
 *                 little-endian
 *
 * A receiver looks for the sync byte, reads the header, refuses a length above the
 * maximum, and checks the CRC. A frame that fails is dropped and the search resumes one
 * byte after its sync byte, so garbage on the line costs only the frames it touches. A
 * frame cut short by a sender that died waits for bytes that never come: a receiver that
 * gives up on an answer (a timeout) resets its decoder.
 *
 * Types (-> main board to co-processor, <- co-processor to main board):
 *
 *   HELLO  <- on each boot:  u32 memory_size, u32 memory_align, u32 epoch, u16 max_payload,
 *                            u8 version. The epoch differs on every boot: a main board
 *                            that sees a new one knows the device memory was lost.
 *   WRITE  -> u32 addr, then the bytes to write at addr in the device memory.
 *             <- STATUS.
 *   READ   -> u32 addr, u32 count (at most max_payload). <- DATA or ERROR.
 *   DATA   <- the count bytes read.
 *   RUN    -> u16 kernel id, u16 channels, then the job descriptor (tvmdev_coproc_job:
 *             TVMDEV_COPROC_JOB_WORDS 32-bit words; every address in it is an offset
 *             into the device memory), then the per-channel requantization: channels
 *             i32 multipliers, then channels i32 shifts (they travel with the job, as
 *             the params struct carries them: CPU arrays). <- DONE.
 *   DONE   <- i32 status (0: the kernel ran; negative: it failed), u32 cycles it took.
 *   STATUS <- i32 status: 0 (a WRITE landed), or a negative TVMDEV_COPROC_E_* code.
 *   ERROR  <- i32 code (TVMDEV_COPROC_E_*): the request was refused (a bad address,
 *             kernel or frame) and nothing was done.
 *   DEBUG  -> u8 fault, u32 argument: fault injection for tests (TVMDEV_COPROC_FAULT_*),
 *             applied to the next RUN. <- STATUS.
 *
 * The main board sends one request at a time and waits for its answer; the co-processor
 * only ever answers, except for HELLO.
 */
#ifndef TVMDEV_COPROC_PROTOCOL_H_
#define TVMDEV_COPROC_PROTOCOL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TVMDEV_COPROC_VERSION 1U
#define TVMDEV_COPROC_SYNC 0xA5U
#define TVMDEV_COPROC_HEADER 5U
#define TVMDEV_COPROC_TRAILER 2U
#define TVMDEV_COPROC_MAX_PAYLOAD 2048U
#define TVMDEV_COPROC_MAX_FRAME \
    (TVMDEV_COPROC_HEADER + TVMDEV_COPROC_MAX_PAYLOAD + TVMDEV_COPROC_TRAILER)

enum tvmdev_coproc_type {
    TVMDEV_COPROC_HELLO = 0x01,
    TVMDEV_COPROC_WRITE = 0x02,
    TVMDEV_COPROC_READ = 0x03,
    TVMDEV_COPROC_DATA = 0x04,
    TVMDEV_COPROC_RUN = 0x05,
    TVMDEV_COPROC_DONE = 0x06,
    TVMDEV_COPROC_STATUS = 0x07,
    TVMDEV_COPROC_ERROR = 0x08,
    TVMDEV_COPROC_DEBUG = 0x7F
};

/* Error codes in STATUS, ERROR and DONE. */
#define TVMDEV_COPROC_E_ADDRESS (-1)  /* outside the device memory */
#define TVMDEV_COPROC_E_KERNEL (-2)   /* no such kernel id */
#define TVMDEV_COPROC_E_FRAME (-3)    /* a payload of the wrong size for its type */
#define TVMDEV_COPROC_E_TYPE (-4)     /* a type the co-processor does not take */
#define TVMDEV_COPROC_E_KERNEL_FAILED (-5)

/* Faults a DEBUG frame arms for the next RUN (tests only). */
#define TVMDEV_COPROC_FAULT_NONE 0U
#define TVMDEV_COPROC_FAULT_BAD_CRC 1U /* DONE goes out with a corrupted CRC */
#define TVMDEV_COPROC_FAULT_DELAY 2U   /* DONE goes out argument ms late */
#define TVMDEV_COPROC_FAULT_DIE 3U     /* the firmware stops (exits) instead of answering */

/* A decoded frame: points into the decoder's buffer, valid until the next feed. */
struct tvmdev_coproc_frame {
    uint8_t type;
    uint8_t seq;
    uint16_t length;
    const uint8_t *payload;
};

/* The receiving side: bytes in, frames out. */
struct tvmdev_coproc_decoder {
    uint8_t buf[TVMDEV_COPROC_MAX_FRAME];
    uint32_t len;
    uint32_t frames;     /* good frames seen */
    uint32_t bad_frames; /* frames dropped for their CRC or length */
    uint32_t skipped;    /* bytes dropped while looking for a sync byte */
    uint8_t returned;    /* buf holds a frame returned by the last feed */
};

/* Results of tvmdev_coproc_feed. */
#define TVMDEV_COPROC_MORE 0 /* no frame yet */
#define TVMDEV_COPROC_FRAME 1 /* *frame is a good frame */
#define TVMDEV_COPROC_BAD (-1) /* a frame was dropped (its CRC or length was wrong) */

uint16_t tvmdev_coproc_crc16(uint16_t crc, const uint8_t *data, uint32_t n);

/* Encode a frame into out (room for TVMDEV_COPROC_MAX_FRAME bytes, or header + n +
 * trailer); the payload is head (hn bytes) then tail (tn bytes), so a WRITE's address
 * and its data need not be contiguous. Returns the frame's size, 0 if too long. */
uint32_t tvmdev_coproc_encode(uint8_t *out, uint8_t type, uint8_t seq, const void *head,
                              uint32_t hn, const void *tail, uint32_t tn);

void tvmdev_coproc_decoder_reset(struct tvmdev_coproc_decoder *d);
/* Take one byte; TVMDEV_COPROC_FRAME when it completes a good frame (in *frame). */
int32_t tvmdev_coproc_feed(struct tvmdev_coproc_decoder *d, uint8_t byte,
                           struct tvmdev_coproc_frame *frame);

/* Little-endian fields. */
uint32_t tvmdev_coproc_get_u32(const uint8_t *p);
void tvmdev_coproc_put_u32(uint8_t *p, uint32_t v);

/* A job: what RUN carries after its kernel id. Every address is an offset into the
 * device memory; the int32 fields are the kernel's params struct (tvmk_s8.h) field for
 * field, so the co-processor rebuilds it without knowing the model. */
#define TVMDEV_COPROC_KERNEL_CONV2D_S8 1U
#define TVMDEV_COPROC_KERNEL_DEPTHWISE_CONV2D_S8 2U

struct tvmdev_coproc_job {
    uint32_t input, weights, bias, output; /* bias: 0xFFFFFFFF for none */
    uint32_t scratch, scratch_bytes;       /* a buffer the kernel may use */
    int32_t N, C, H, W, KH, KW, OH, OW;
    int32_t stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
    int32_t M_or_mult, group; /* conv2d: M and group; depthwise: the multiplier, 1 */
    int32_t input_offset, output_offset, activation_min, activation_max;
};
#define TVMDEV_COPROC_NO_ADDR 0xFFFFFFFFU
#define TVMDEV_COPROC_JOB_WORDS 26U
/* The most output channels a RUN can carry the requantization of. */
#define TVMDEV_COPROC_MAX_CHANNELS \
    ((TVMDEV_COPROC_MAX_PAYLOAD - 4U - 4U * TVMDEV_COPROC_JOB_WORDS) / 8U)

/* The job as RUN's payload (4 + 4 * TVMDEV_COPROC_JOB_WORDS + 8 * channels bytes, into
 * out of TVMDEV_COPROC_MAX_PAYLOAD bytes; 0 with more than TVMDEV_COPROC_MAX_CHANNELS). */
uint32_t tvmdev_coproc_job_encode(uint8_t *out, uint16_t kernel,
                                  const struct tvmdev_coproc_job *job, uint32_t channels,
                                  const int32_t *multiplier, const int32_t *shift);
/* Back: the job, and the arrays into multiplier and shift (room for
 * TVMDEV_COPROC_MAX_CHANNELS each); the channel count, or TVMDEV_COPROC_E_FRAME. */
int32_t tvmdev_coproc_job_decode(const uint8_t *in, uint32_t n, uint16_t *kernel,
                                 struct tvmdev_coproc_job *job, int32_t *multiplier,
                                 int32_t *shift);

#ifdef __cplusplus
}
#endif

#endif /* TVMDEV_COPROC_PROTOCOL_H_ */
