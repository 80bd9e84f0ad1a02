/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's built-in Metal GEMM, host code: tvmk_metal_gemm_f32 for operators on a device
 * of kind "metal" (tvmdev new-device metal --platform metal).
 *
 * Y = alpha * A @ B + beta * C. The GPU computes D = A @ B in float with one of two
 * kernels, chosen by tvmk_metal_gemm_choose (tvmk_metal.h; tvmdev/metal.py states the same
 * rule): gemm_matmul2d.metal (Metal 4, cooperative tensors) when the device is in
 * MTLGPUFamilyMetal4 and M reaches the board's crossover, gemm_simdgroup.metal (Metal 3,
 * simdgroup_matrix) otherwise. The CPU then applies alpha, beta and C as the portable
 * kernel does. Without a Metal device the kernel returns TVM_DEVICE_DECLINED and the
 * executor runs the portable tvmk_gemm_f32; it declines transposed operands too.
 *
 * The result is read on the host before the kernel returns, so the kernel commits its own
 * command buffer to the device's queue and waits on the device's shared event; the
 * command buffer Open began is left to Close. What the kernel keeps per device (compiled
 * pipelines, staging buffers) hangs off kernel_state, which the device's Destroy
 * releases.
 *
 * Build: clang -fno-objc-arc with tvmk_metal_config.h (rendered by tvmdev for the board:
 * the crossover and the MSL sources) on the include path; link -framework Metal
 * -framework Foundation.
 */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <stdlib.h>
#include <string.h>

#include "tvm/device/metal/metal.h"
#include "tvmk_metal.h"
#include "tvmk_metal_config.h"

#if __has_feature(objc_arc)
#error "tvmk_metal_gemm.m uses manual retain/release: build it with -fno-objc-arc"
#endif

/* The Metal 4 code is compiled when the SDK declares it; it runs on devices whose
 * tvm_device_metal_t says metal4 (MTLGPUFamilyMetal4 on macOS 26 or later). */
#if defined(__MAC_26_0) && __MAC_OS_X_VERSION_MAX_ALLOWED >= __MAC_26_0 && \
    __has_include(<Metal/MTL4CommandQueue.h>)
#define TVMK_METAL4 1
#else
#define TVMK_METAL4 0
#endif

/* What the kernel keeps per device. Metal 4 objects are typed id here and cast where
 * they are used, inside code that runs on macOS 26 only. */
struct tvmk_metal_state {
    id<MTLComputePipelineState> simdgroup; /* tvmk_metal_gemm_simdgroup_f32 */
    id<MTLComputePipelineState> matmul2d;  /* tvmk_metal_gemm_matmul2d_f32 (Metal 4) */
    id<MTLBuffer> a, b, d, dims;           /* shared staging buffers, grown on demand */
    id residency;                          /* MTLResidencySet of the buffers (Metal 4) */
    id compiler;                           /* MTL4Compiler */
    id allocator;                          /* MTL4CommandAllocator of command_buffer */
    id command_buffer;                     /* MTL4CommandBuffer, reused by every call */
    id argument_table;                     /* MTL4ArgumentTable */
};

#if TVMK_METAL4
static int32_t setup_metal4(id<MTLDevice> device, struct tvmk_metal_state *s)
    API_AVAILABLE(macos(26.0));
static id<MTLComputePipelineState> pipeline_metal4(id<MTL4Compiler> compiler,
                                                   id<MTLLibrary> library, NSString *name,
                                                   NSError **err) API_AVAILABLE(macos(26.0));
static id<MTLTensor> matrix_tensor(id<MTLBuffer> buffer, NSInteger inner, NSInteger outer,
                                   NSError **err) API_AVAILABLE(macos(26.0));
static int32_t run_metal4(tvm_device_metal_t *dev, struct tvmk_metal_state *s,
                          enum tvmk_metal_gemm_kernel kernel, int32_t m, int32_t n,
                          int32_t k) API_AVAILABLE(macos(26.0));
#endif

/* The status of a failed Metal call: err is the NSError it reported, or nil when it
 * only returned nil. */
static int32_t status_from_error(NSError *err)
{
    if (err == nil) {
        return TVM_DEVICE_ERR_IO;
    }
    if ([err.domain isEqualToString:MTLCommandBufferErrorDomain]) {
        switch (err.code) {
        case MTLCommandBufferErrorTimeout:
            return TVM_DEVICE_ERR_TIMEOUT;
        case MTLCommandBufferErrorNotPermitted:
            return TVM_DEVICE_ERR_NOT_READY;
        default:
            return TVM_DEVICE_ERR_IO;
        }
    }
    return TVM_DEVICE_ERR_IO;
}

static void state_release(void *p)
{
    struct tvmk_metal_state *s = (struct tvmk_metal_state *)p;

    [s->simdgroup release];
    [s->matmul2d release];
    [s->a release];
    [s->b release];
    [s->d release];
    [s->dims release];
    [s->residency release];
    [s->compiler release];
    [s->allocator release];
    [s->command_buffer release];
    [s->argument_table release];
    free(s);
}

/* One MSL source from the lines tvmk_metal_config.h holds it in. Autoreleased. */
static NSString *msl_source(const char *const *lines)
{
    NSMutableString *text = [NSMutableString string];

    for (; *lines != NULL; ++lines) {
        [text appendString:[NSString stringWithUTF8String:*lines]];
    }
    return text;
}

static int32_t setup_metal3(id<MTLDevice> device, struct tvmk_metal_state *s)
{
    NSError *err = nil;
    id<MTLLibrary> library;
    id<MTLFunction> function;

    library = [device newLibraryWithSource:msl_source(tvmk_metal_simdgroup_msl) options:nil
                                     error:&err];
    if (library == nil) {
        return status_from_error(err);
    }
    function = [library newFunctionWithName:@"tvmk_metal_gemm_simdgroup_f32"];
    [library release];
    if (function == nil) {
        return TVM_DEVICE_ERR_IO;
    }
    s->simdgroup = [device newComputePipelineStateWithFunction:function error:&err];
    [function release];
    if (s->simdgroup == nil) {
        return status_from_error(err);
    }
    if (s->simdgroup.maxTotalThreadsPerThreadgroup < TVMK_METAL_THREADS) {
        return TVM_DEVICE_ERR_UNSUPPORTED;
    }
    return TVM_DEVICE_OK;
}

#if TVMK_METAL4
/* Cooperative-tensor pipelines come from MTL4Compiler with an
 * MTL4ComputePipelineDescriptor: requiredThreadsPerThreadgroup exists only there, and a
 * matmul2d pipeline from the legacy newComputePipelineStateWithFunction: path silently
 * mis-dispatches. Both kernels are built this way on Metal 4 devices. */
static id<MTLComputePipelineState> pipeline_metal4(id<MTL4Compiler> compiler,
                                                   id<MTLLibrary> library, NSString *name,
                                                   NSError **err)
{
    MTL4LibraryFunctionDescriptor *function = [[MTL4LibraryFunctionDescriptor alloc] init];
    MTL4ComputePipelineDescriptor *desc = [[MTL4ComputePipelineDescriptor alloc] init];
    id<MTLComputePipelineState> pipeline;

    function.library = library;
    function.name = name;
    desc.computeFunctionDescriptor = function;
    /* Mandatory with cooperative tensors: the kernel's execution_simdgroups<4> is 128
     * threads, and every dispatch passes the same threadsPerThreadgroup. */
    desc.requiredThreadsPerThreadgroup = MTLSizeMake(TVMK_METAL_THREADS, 1, 1);
    pipeline = [compiler newComputePipelineStateWithDescriptor:desc
                                            compilerTaskOptions:nil
                                                          error:err];
    [desc release];
    [function release];
    return pipeline;
}

static int32_t setup_metal4(id<MTLDevice> device, struct tvmk_metal_state *s)
{
    MTL4CompilerDescriptor *compiler_desc = [[MTL4CompilerDescriptor alloc] init];
    MTL4ArgumentTableDescriptor *table_desc = [[MTL4ArgumentTableDescriptor alloc] init];
    MTLResidencySetDescriptor *residency_desc = [[MTLResidencySetDescriptor alloc] init];
    MTLCompileOptions *options = [[MTLCompileOptions alloc] init];
    id<MTLLibrary> simdgroup_library = nil;
    id<MTLLibrary> matmul2d_library = nil;
    NSError *err = nil;
    int32_t status = TVM_DEVICE_OK;

    table_desc.maxBufferBindCount = 4;
    residency_desc.label = @"tvmk_metal staging";
    options.languageVersion = MTLLanguageVersion4_0; /* metal_tensor and matmul2d */
    s->compiler = [device newCompilerWithDescriptor:compiler_desc error:&err];
    if (s->compiler != nil) {
        s->argument_table = [device newArgumentTableWithDescriptor:table_desc error:&err];
    }
    if (s->argument_table != nil) {
        s->residency = [device newResidencySetWithDescriptor:residency_desc error:&err];
    }
    if (s->residency != nil) {
        simdgroup_library = [device newLibraryWithSource:msl_source(tvmk_metal_simdgroup_msl)
                                                 options:nil
                                                   error:&err];
    }
    if (simdgroup_library != nil) {
        matmul2d_library = [device newLibraryWithSource:msl_source(tvmk_metal_matmul2d_msl)
                                                options:options
                                                  error:&err];
    }
    if (matmul2d_library != nil) {
        s->simdgroup = pipeline_metal4(s->compiler, simdgroup_library,
                                       @"tvmk_metal_gemm_simdgroup_f32", &err);
    }
    if (s->simdgroup != nil) {
        s->matmul2d = pipeline_metal4(s->compiler, matmul2d_library,
                                      @"tvmk_metal_gemm_matmul2d_f32", &err);
    }
    if (s->matmul2d == nil) {
        status = status_from_error(err);
    } else {
        s->allocator = [device newCommandAllocator];
        s->command_buffer = [device newCommandBuffer];
        if (s->allocator == nil || s->command_buffer == nil) {
            status = TVM_DEVICE_ERR_IO;
        }
    }
    [matmul2d_library release];
    [simdgroup_library release];
    [options release];
    [residency_desc release];
    [table_desc release];
    [compiler_desc release];
    return status;
}
#endif

/* The kernel's state for dev, made on the first call. */
static int32_t state_of(tvm_device_metal_t *dev, struct tvmk_metal_state **out)
{
    struct tvmk_metal_state *s;
    int32_t status = TVM_DEVICE_ERR_UNSUPPORTED;

    if (dev->kernel_state != NULL) {
        if (dev->kernel_state_release != state_release) {
            return TVM_DEVICE_DECLINED; /* another kernel library keeps state here */
        }
        *out = (struct tvmk_metal_state *)dev->kernel_state;
        return TVM_DEVICE_OK;
    }
    s = (struct tvmk_metal_state *)calloc(1, sizeof(*s));
    if (s == NULL) {
        return TVM_DEVICE_ERR_IO;
    }
    if (!dev->metal4) {
        status = setup_metal3((id<MTLDevice>)dev->device, s);
    }
#if TVMK_METAL4
    else if (@available(macOS 26.0, *)) {
        status = setup_metal4((id<MTLDevice>)dev->device, s);
    }
#endif
    if (status != TVM_DEVICE_OK) {
        state_release(s);
        return status;
    }
    dev->kernel_state = s;
    dev->kernel_state_release = state_release;
    *out = s;
    return TVM_DEVICE_OK;
}

/* A shared buffer of at least bytes in *buffer: the one there if it is large enough,
 * else a new one, which replaces it in the residency set (Metal 4). */
static int32_t ensure_buffer(id<MTLDevice> device, struct tvmk_metal_state *s,
                             id<MTLBuffer> *buffer, size_t bytes)
{
    id<MTLBuffer> fresh;

    if (*buffer != nil && (*buffer).length >= bytes) {
        return TVM_DEVICE_OK;
    }
    if (bytes > device.maxBufferLength) {
        return TVM_DEVICE_DECLINED;
    }
    fresh = [device newBufferWithLength:bytes options:MTLResourceStorageModeShared];
    if (fresh == nil) {
        return TVM_DEVICE_ERR_IO;
    }
    if (s->residency != nil) {
        if (@available(macOS 15.0, *)) {
            id<MTLResidencySet> residency = (id<MTLResidencySet>)s->residency;

            if (*buffer != nil) {
                [residency removeAllocation:*buffer];
            }
            [residency addAllocation:fresh];
        }
    }
    [*buffer release];
    *buffer = fresh;
    return TVM_DEVICE_OK;
}

static int32_t stage(id<MTLDevice> device, struct tvmk_metal_state *s, const float *A,
                     const float *B, int32_t m, int32_t n, int32_t k)
{
    const size_t a_bytes = (size_t)m * (size_t)k * sizeof(float);
    const size_t b_bytes = (size_t)k * (size_t)n * sizeof(float);
    struct tvmk_metal_gemm_dims dims;
    int32_t status;

    status = ensure_buffer(device, s, &s->a, a_bytes);
    if (status == TVM_DEVICE_OK) {
        status = ensure_buffer(device, s, &s->b, b_bytes);
    }
    if (status == TVM_DEVICE_OK) {
        status = ensure_buffer(device, s, &s->d, (size_t)m * (size_t)n * sizeof(float));
    }
    if (status == TVM_DEVICE_OK) {
        status = ensure_buffer(device, s, &s->dims, sizeof(dims));
    }
    if (status != TVM_DEVICE_OK) {
        return status;
    }
    dims.m = (uint32_t)m;
    dims.n = (uint32_t)n;
    dims.k = (uint32_t)k;
    memcpy(s->a.contents, A, a_bytes);
    memcpy(s->b.contents, B, b_bytes);
    memcpy(s->dims.contents, &dims, sizeof(dims));
    return TVM_DEVICE_OK;
}

static int32_t run_metal3(tvm_device_metal_t *dev, struct tvmk_metal_state *s, int32_t m,
                          int32_t n)
{
    const struct tvmk_metal_grid grid =
        tvmk_metal_gemm_grid(TVMK_METAL_GEMM_SIMDGROUP_MATRIX, m, n);
    id<MTLSharedEvent> event = (id<MTLSharedEvent>)dev->event;
    const uint64_t value = dev->signal_value + 1;
    id<MTLCommandBuffer> command_buffer = [(id<MTLCommandQueue>)dev->queue commandBuffer];
    id<MTLComputeCommandEncoder> encoder = [command_buffer computeCommandEncoder];

    if (command_buffer == nil || encoder == nil) {
        return TVM_DEVICE_ERR_IO;
    }
    [encoder setComputePipelineState:s->simdgroup];
    [encoder setBuffer:s->a offset:0 atIndex:0];
    [encoder setBuffer:s->b offset:0 atIndex:1];
    [encoder setBuffer:s->d offset:0 atIndex:2];
    [encoder setBuffer:s->dims offset:0 atIndex:3];
    /* The kernel's [[threadgroup(0)]] parameter gets no memory unless it is sized here:
     * without it the kernel reads a null pointer and silently writes nothing. */
    [encoder setThreadgroupMemoryLength:tvmk_metal_simdgroup_threadgroup_bytes(sizeof(float))
                                atIndex:0];
    [encoder dispatchThreadgroups:MTLSizeMake(grid.x, grid.y, 1)
            threadsPerThreadgroup:MTLSizeMake(TVMK_METAL_THREADS, 1, 1)];
    [encoder endEncoding];
    /* A Metal 3 command buffer signals the event from inside, after the work before it. */
    [command_buffer encodeSignalEvent:event value:value];
    [command_buffer commit];
    dev->signal_value = value;
    if (![event waitUntilSignaledValue:value timeoutMS:TVM_DEVICE_METAL_TIMEOUT_MS]) {
        return TVM_DEVICE_ERR_TIMEOUT;
    }
    if (command_buffer.status == MTLCommandBufferStatusError) {
        return status_from_error(command_buffer.error);
    }
    return TVM_DEVICE_OK;
}

#if TVMK_METAL4
/* A tensor over a row-major matrix in buffer. Metal orders extents innermost first: a
 * row-major M x K matrix is the tensor with extents (K, M) and strides (1, K), so inner
 * is the number of columns and outer the number of rows. Reading it the other way round
 * is the multi-tile bug of gemm_matmul2d.metal. */
static id<MTLTensor> matrix_tensor(id<MTLBuffer> buffer, NSInteger inner, NSInteger outer,
                                   NSError **err)
{
    const NSInteger extent_values[2] = {inner, outer};
    const NSInteger stride_values[2] = {1, inner};
    MTLTensorExtents *extents = [[MTLTensorExtents alloc] initWithRank:2 values:extent_values];
    MTLTensorExtents *strides = [[MTLTensorExtents alloc] initWithRank:2 values:stride_values];
    MTLTensorDescriptor *desc = [[MTLTensorDescriptor alloc] init];
    id<MTLTensor> tensor;

    desc.dimensions = extents;
    desc.strides = strides;
    desc.dataType = MTLTensorDataTypeFloat32;
    desc.usage = MTLTensorUsageCompute;
    desc.storageMode = buffer.storageMode;
    tensor = [buffer newTensorWithDescriptor:desc offset:0 error:err];
    [desc release];
    [strides release];
    [extents release];
    return tensor;
}

static int32_t run_metal4(tvm_device_metal_t *dev, struct tvmk_metal_state *s,
                          enum tvmk_metal_gemm_kernel kernel, int32_t m, int32_t n, int32_t k)
{
    const struct tvmk_metal_grid grid = tvmk_metal_gemm_grid(kernel, m, n);
    id<MTL4CommandQueue> queue = (id<MTL4CommandQueue>)dev->queue;
    id<MTL4CommandBuffer> command_buffer = (id<MTL4CommandBuffer>)s->command_buffer;
    id<MTL4ArgumentTable> table = (id<MTL4ArgumentTable>)s->argument_table;
    id<MTLResidencySet> residency = (id<MTLResidencySet>)s->residency;
    id<MTLSharedEvent> event = (id<MTLSharedEvent>)dev->event;
    const uint64_t value = dev->signal_value + 1;
    id<MTLTensor> tensors[3] = {nil, nil, nil};
    id<MTL4ComputeCommandEncoder> encoder;
    NSError *err = nil;
    int i;

    if (kernel == TVMK_METAL_GEMM_MATMUL2D) {
        /* K is a dynamic extent of the kernel: it travels in these tensors' extents,
         * so the one pipeline serves every K. */
        tensors[0] = matrix_tensor(s->a, k, m, &err); /* A, M x K: extents (K, M) */
        tensors[1] = matrix_tensor(s->b, n, k, &err); /* B, K x N: extents (N, K) */
        tensors[2] = matrix_tensor(s->d, n, m, &err); /* D, M x N: extents (N, M) */
        if (tensors[0] == nil || tensors[1] == nil || tensors[2] == nil) {
            for (i = 0; i < 3; ++i) {
                [tensors[i] release];
            }
            return status_from_error(err);
        }
        for (i = 0; i < 3; ++i) {
            [table setResource:tensors[i].gpuResourceID atBufferIndex:(NSUInteger)i];
            [residency addAllocation:tensors[i]];
        }
    } else {
        [table setAddress:s->a.gpuAddress atIndex:0];
        [table setAddress:s->b.gpuAddress atIndex:1];
        [table setAddress:s->d.gpuAddress atIndex:2];
        [table setAddress:s->dims.gpuAddress atIndex:3];
    }

    /* The previous call's work has finished (its wait returned, or the caller checked
     * that the event caught up), so the allocator's memory is free again. */
    [(id<MTL4CommandAllocator>)s->allocator reset];
    [command_buffer beginCommandBufferWithAllocator:(id<MTL4CommandAllocator>)s->allocator];
    encoder = [command_buffer computeCommandEncoder];
    if (kernel == TVMK_METAL_GEMM_MATMUL2D) {
        [encoder setComputePipelineState:s->matmul2d];
    } else {
        [encoder setComputePipelineState:s->simdgroup];
        /* The kernel's [[threadgroup(0)]] parameter: Metal 4 allocates no threadgroup
         * memory by itself; without this the kernel sees a null pointer and silently
         * writes nothing. */
        [encoder setThreadgroupMemoryLength:tvmk_metal_simdgroup_threadgroup_bytes(sizeof(float))
                                    atIndex:0];
    }
    [encoder setArgumentTable:table];
    [encoder dispatchThreadgroups:MTLSizeMake(grid.x, grid.y, 1)
            threadsPerThreadgroup:MTLSizeMake(TVMK_METAL_THREADS, 1, 1)];
    [encoder endEncoding];
    [command_buffer endCommandBuffer];

    /* Metal 4 tracks no residency by itself: every buffer and tensor the dispatch uses
     * must be in a residency set that is on the queue before the commit, or the
     * dispatch silently does nothing. */
    [residency commit];
    [queue addResidencySet:residency];
    [queue commit:&command_buffer count:1];
    /* An MTL4 command queue has no waitUntilCompleted: signal the shared event after the
     * commit and wait for that value on the host, with a timeout. */
    [queue signalEvent:event value:value];
    dev->signal_value = value;
    if (![event waitUntilSignaledValue:value timeoutMS:TVM_DEVICE_METAL_TIMEOUT_MS]) {
        return TVM_DEVICE_ERR_TIMEOUT; /* the GPU may still use all of it: keep it all */
    }
    [queue removeResidencySet:residency];
    for (i = 0; i < 3; ++i) {
        if (tensors[i] != nil) {
            [residency removeAllocation:tensors[i]];
            [tensors[i] release];
        }
    }
    return TVM_DEVICE_OK;
}
#endif

/* Runs the chosen kernel on the staged buffers and waits for it. */
static int32_t run(tvm_device_metal_t *dev, struct tvmk_metal_state *s,
                   enum tvmk_metal_gemm_kernel kernel, int32_t m, int32_t n, int32_t k)
{
    if (!dev->metal4) {
        return run_metal3(dev, s, m, n);
    }
#if TVMK_METAL4
    if (@available(macOS 26.0, *)) {
        return run_metal4(dev, s, kernel, m, n, k);
    }
#endif
    (void)kernel;
    (void)k;
    return TVM_DEVICE_ERR_UNSUPPORTED;
}

/* Y = alpha * D + beta * C on the CPU, in the portable kernel's order (C may alias Y). */
static void epilogue(const float *D, const float *C, float *Y,
                     const struct tvmk_gemm_params *p)
{
    int32_t i, j;

    for (i = 0; i < p->M; ++i) {
        for (j = 0; j < p->N; ++j) {
            const size_t at = (size_t)i * (size_t)p->N + (size_t)j;

            Y[at] = C == NULL ? p->alpha * D[at]
                              : p->beta * C[(ptrdiff_t)i * p->c_stride_m +
                                            (ptrdiff_t)j * p->c_stride_n] +
                                    p->alpha * D[at];
        }
    }
}

int32_t tvmk_metal_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                            const struct tvmk_gemm_params *params, void *resource_handle)
{
    tvm_device_metal_t *dev = (tvm_device_metal_t *)resource_handle;
    const int has_device = dev != NULL && dev->initialized && dev->device != NULL;
    struct tvmk_metal_state *s = NULL;
    enum tvmk_metal_gemm_kernel kernel;
    int32_t m, n, k, status;

    if (A == NULL || B == NULL || Y == NULL || params == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    m = params->M;
    n = params->N;
    k = params->K;
    kernel = tvmk_metal_gemm_choose(m, has_device, has_device && dev->metal4,
                                    TVMK_METAL_CROSSOVER_M);
    if (kernel == TVMK_METAL_GEMM_PORTABLE) {
        return TVM_DEVICE_DECLINED;
    }
    /* The portable kernel serves what these kernels do not: transposed operands, empty
     * products, and matrices too large for the kernels' 32-bit indices. */
    if (params->trans_a || params->trans_b || m <= 0 || n <= 0 || k <= 0 ||
        (uint64_t)m * (uint64_t)k > UINT32_MAX || (uint64_t)k * (uint64_t)n > UINT32_MAX ||
        (uint64_t)m * (uint64_t)n > UINT32_MAX) {
        return TVM_DEVICE_DECLINED;
    }
#if !TVMK_METAL4
    if (dev->metal4) {
        return TVM_DEVICE_DECLINED; /* a Metal 4 queue, and this file built without Metal 4 */
    }
#endif
    if (dev->queue == NULL) {
        return TVM_DEVICE_ERR_NOT_READY; /* called outside Activate .. Deactivate */
    }
    if (((id<MTLSharedEvent>)dev->event).signaledValue < dev->signal_value) {
        return TVM_DEVICE_ERR_BUSY; /* the GPU still runs work from a timed-out wait */
    }
    @autoreleasepool {
        status = state_of(dev, &s);
        if (status == TVM_DEVICE_OK) {
            status = stage((id<MTLDevice>)dev->device, s, A, B, m, n, k);
        }
        if (status == TVM_DEVICE_OK) {
            status = run(dev, s, kernel, m, n, k);
        }
    }
    if (status == TVM_DEVICE_OK) {
        epilogue((const float *)s->d.contents, C, Y, params);
    }
    return status;
}
