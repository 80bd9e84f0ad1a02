/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The uart_npu driver's own interface, between its device file (src/device/uart_npu/
 * cmsis.c, or zephyr.c of examples/uart_npu_zephyr) and its kernels (src/kernels/uart_npu/conv2d.c, depthwise_conv2d.c): a kernel
 * turns its params into a RUN frame of the co-processor protocol
 * (runtime/coproc/protocol.h) and returns TVM_DEVICE_PENDING; the executor's Wait
 * collects the DONE.
 */
#ifndef UART_NPU_LINK_H_
#define UART_NPU_LINK_H_

#include <stdint.h>

#include "protocol.h"
#ifdef __ZEPHYR__
#include "tvm/device/uart_npu/zephyr.h" /* examples/uart_npu_zephyr */
#else
#include "tvm/device/uart_npu/cmsis.h"
#endif
#include "tvmk_s8.h"

/*
 * The device-memory API of a kind generated with `new-device --memory` (tvm/device/
 * uart_npu.h declares it there). Until every tvmdev has that option, a kind generated
 * without it gets the same declarations here; with it, this block is skipped.
 */
#ifndef TVM_DEVICE_UART_NPU_MEMORY_SIZE
#ifndef TVM_DEVICE_PENDING
#define TVM_DEVICE_PENDING (1)
#endif
typedef uint32_t tvm_device_uart_npu_addr_t;
#define TVM_DEVICE_UART_NPU_MEMORY_SIZE UART_NPU_MEMORY_SIZE
#define TVM_DEVICE_UART_NPU_MEMORY_ALIGN UART_NPU_MEMORY_ALIGN
int32_t TVMDeviceUartNpuCopyTo(tvm_device_uart_npu_t *tvm_dev, tvm_device_uart_npu_addr_t dst,
                               const void *src, uint32_t nbytes);
int32_t TVMDeviceUartNpuCopyFrom(tvm_device_uart_npu_t *tvm_dev, void *dst,
                                 tvm_device_uart_npu_addr_t src, uint32_t nbytes);
int32_t TVMDeviceUartNpuWait(tvm_device_uart_npu_t *tvm_dev, uint32_t timeout_ms);
#endif
#ifndef TVM_DEVICE_UART_NPU_ADDR_NONE
#define TVM_DEVICE_UART_NPU_ADDR_NONE 0xffffffffu /* an absent optional input */
#endif

/* The kernels the executor calls for operators placed on the device (docs/
 * device-memory.md): tensors as addresses in the device's memory, the CPU's params. */
int32_t uart_npu_conv2d_s8(tvm_device_uart_npu_addr_t X, tvm_device_uart_npu_addr_t W,
                           tvm_device_uart_npu_addr_t B, tvm_device_uart_npu_addr_t Y,
                           const struct tvmk_conv2d_s8_params *params,
                           void *resource_handle, tvm_device_uart_npu_addr_t scratch);
int32_t uart_npu_depthwise_conv2d_s8(tvm_device_uart_npu_addr_t input,
                                     tvm_device_uart_npu_addr_t filter,
                                     tvm_device_uart_npu_addr_t bias,
                                     tvm_device_uart_npu_addr_t output,
                                     const struct tvmk_depthwise_conv2d_s8_params *params,
                                     void *resource_handle,
                                     tvm_device_uart_npu_addr_t scratch);

/* Send a RUN of kernel with its job and requantization; PENDING, or an error. */
int32_t uart_npu_run(tvm_device_uart_npu_t *tvm_dev, uint16_t kernel,
                     const struct tvmdev_coproc_job *job, int32_t channels,
                     const int32_t *multiplier, const int32_t *shift);

/* What crossed the link since Init, each way, in bytes (frames included). */
struct uart_npu_stats {
    uint32_t bytes_to_device;
    uint32_t bytes_from_device;
    uint32_t bad_frames;   /* dropped by the decoder: corrupted or cut short */
    uint32_t stale_frames; /* answers that came after their request timed out */
    uint32_t last_cycles;  /* SysTick cycles the co-processor reported for its last job */
};
void uart_npu_stats(struct uart_npu_stats *out);

/* Tests only: arm a fault of the co-processor for its next RUN (TVMDEV_COPROC_FAULT_*). */
int32_t uart_npu_debug_fault(tvm_device_uart_npu_t *tvm_dev, uint8_t fault, uint32_t arg);

#endif /* UART_NPU_LINK_H_ */
