/*
 * The TFLM peer's firmware (benchmarks/_tflm_peer.py builds it): one model through TFLM's
 * MicroInterpreter on a bare-metal tvmdev board (runtime/cortex_m's startup, the CMSDK
 * console UART). It registers only the operators the model uses, the int8 variants where
 * TFLM has them (peer_ops.inc, generated), allocates the tensors, copies the inputs in,
 * runs Invoke once (counted with runtime/cortex_m/icount.c when built with TVMDEV_ICOUNT)
 * and prints, each on its own line:
 *
 *   tflm: arena_used_bytes N
 *   tvmdev: icount ticks N        (with TVMDEV_ICOUNT)
 *   tflm: output I HEX            (the raw bytes of output I)
 *   tflm: done
 *
 * A failure prints "tflm: error ..." and returns a non-zero status (the semihosting exit).
 */
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensorflow/lite/micro/cortex_m_generic/debug_log_callback.h"
#include "tensorflow/lite/micro/kernels/pad.h"
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" {
#include "Driver_USART.h"
#ifdef TVMDEV_ICOUNT
#include "icount.h"
#endif
}

#include "peer_config.h" /* PEER_OPS, PEER_ARENA_BYTES, PEER_CONSOLE, PEER_INPUT_COUNT, PEER_INPUT_BYTES */

extern "C" const unsigned char tflm_peer_model[];
extern "C" const signed char tflm_peer_input[];
extern "C" const unsigned int tflm_peer_input_len;

#define PEER_USART_NAME(n) Driver_USART##n
#define PEER_USART(n) PEER_USART_NAME(n)
extern "C" ARM_DRIVER_USART PEER_USART(PEER_CONSOLE);

typedef void (*peer_ctor_t)(void);
extern "C" peer_ctor_t __init_array_start[];
extern "C" peer_ctor_t __init_array_end[];

/* In a section of its own: _tflm_layout.py places it (a large model's in a larger RAM). */
alignas(16) static uint8_t arena[PEER_ARENA_BYTES] __attribute__((section(".bss.tflm_peer_arena")));

static void put(const char* text) {
  uint32_t n = 0;
  while (text[n] != '\0') {
    n++;
  }
  (void)PEER_USART(PEER_CONSOLE).Send(text, n);
}

static void put_u64(uint64_t value) {
  char text[24];
  int i = 23;
  text[i--] = '\0';
  do {
    text[i--] = static_cast<char>('0' + value % 10U);
    value /= 10U;
  } while (value != 0U);
  put(&text[i + 1]);
}

static void put_hex(const uint8_t* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  char pair[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    pair[0] = digits[bytes[i] >> 4];
    pair[1] = digits[bytes[i] & 0xFU];
    put(pair);
  }
}

static void log_line(const char* text) {
  put("tflm: log ");
  put(text);
  put("\n");
}

static int fail(const char* what) {
  put("tflm: error ");
  put(what);
  put("\n");
  return 3;
}

/* The inputs: their raw bytes, one input after the other in tflm_peer_input (the
 * Python side computed them, float or integer, as the model's inputs take them). */
static int set_inputs(tflite::MicroInterpreter& interpreter) {
  static const size_t sizes[PEER_INPUT_COUNT] = PEER_INPUT_BYTES;
  size_t offset = 0;
  if (interpreter.inputs_size() != PEER_INPUT_COUNT) {
    return fail("inputs: not the count expected");
  }
  for (size_t i = 0; i < PEER_INPUT_COUNT; i++) {
    TfLiteTensor* input = interpreter.input(i);
    if (input->bytes != sizes[i] || offset + sizes[i] > tflm_peer_input_len) {
      return fail("input tensor: not the size expected");
    }
    std::memcpy(input->data.raw, &tflm_peer_input[offset], sizes[i]);
    offset += sizes[i];
  }
  return 0;
}

int main(void) {
  for (peer_ctor_t* ctor = __init_array_start; ctor < __init_array_end; ctor++) {
    (*ctor)();
  }
  (void)PEER_USART(PEER_CONSOLE).Initialize(0);
  (void)PEER_USART(PEER_CONSOLE).PowerControl(ARM_POWER_FULL);
  RegisterDebugLogCallback(log_line);

  /* On the stack, not static: main does not return to a C++ runtime that would run
   * their destructors (no __cxa_atexit, no __dso_handle). */
  tflite::MicroMutableOpResolver<PEER_OP_COUNT> resolver;
  PEER_OPS(resolver);
  tflite::MicroInterpreter interpreter(tflite::GetModel(tflm_peer_model), resolver, arena,
                                       sizeof(arena));
  if (interpreter.AllocateTensors() != kTfLiteOk) {
    return fail("AllocateTensors");
  }
  put("tflm: arena_used_bytes ");
  put_u64(interpreter.arena_used_bytes());
  put("\n");
  if (set_inputs(interpreter) != 0) {
    return 3;
  }
#ifdef TVMDEV_ICOUNT
  tvmdev_icount_start();
#endif
  TfLiteStatus status = interpreter.Invoke();
#ifdef TVMDEV_ICOUNT
  uint64_t ticks = tvmdev_icount_ticks();
#endif
  if (status != kTfLiteOk) {
    return fail("Invoke");
  }
#ifdef TVMDEV_ICOUNT
  put("tvmdev: icount ticks ");
  put_u64(ticks);
  put("\n");
#endif
  for (size_t i = 0; i < interpreter.outputs_size(); i++) {
    const TfLiteTensor* out = interpreter.output(i);
    put("tflm: output ");
    put_u64(i);
    put(" ");
    put_hex(reinterpret_cast<const uint8_t*>(out->data.raw), out->bytes);
    put("\n");
  }
  put("tflm: done\n");
  return 0;
}
