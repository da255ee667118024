/* An LD_PRELOAD shim that makes an OpenCL device compute wrong AES, as a
 * faulty GPU would, so test_gpu_cli.py can check through the real binary that
 * paes notices, and tells when paes loads the OpenCL platforms at all. It lives in the tests only: paes itself has no switch that
 * corrupts its output. Environment variables, read at each call; with none
 * set, every call passes through.
 *
 *   PAES_CL_CORRUPT_MIN_BYTES=N  every read of a kernel's output back to the
 *                                host (clEnqueueReadBuffer) of at least N
 *                                bytes gets one bit flipped in each 16-byte
 *                                block. 0 corrupts every read, the start-up
 *                                self-test's included; a size above the
 *                                self-test's 64 bytes corrupts only the job's
 *                                batches, so the per-batch check must see it.
 *   PAES_CL_FAKE_GPU=1           every device reports CL_DEVICE_TYPE_GPU, so
 *                                --engine auto picks PoCL's CPU device.
 *   PAES_CL_TRACE=FILE           each clGetPlatformIDs call (what loads the
 *                                drivers) appends a line to FILE. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cl_int (*read_buffer_fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                 const cl_event *, cl_event *);
typedef cl_int (*device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);
typedef cl_int (*platform_ids_fn)(cl_uint, cl_platform_id *, cl_uint *);

/* The loader's function of that name. ISO C has no cast from dlsym's object
 * pointer to a function pointer; POSIX guarantees the representations match,
 * so the caller copies the bytes. */
static void *next_symbol(const char *name) {
  void *sym = dlsym(RTLD_NEXT, name);
  if (sym == NULL) abort();
  return sym;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
                                                    cl_bool blocking, size_t offset, size_t size,
                                                    void *ptr, cl_uint wait_count,
                                                    const cl_event *wait_list, cl_event *event) {
  void *sym = next_symbol("clEnqueueReadBuffer");
  read_buffer_fn real;
  memcpy(&real, &sym, sizeof sym);
  const char *min = getenv("PAES_CL_CORRUPT_MIN_BYTES");
  if (min == NULL || size < strtoull(min, NULL, 10)) {
    return real(queue, buffer, blocking, offset, size, ptr, wait_count, wait_list, event);
  }
  /* Blocking, so the bytes are in place to corrupt when the real call returns. */
  const cl_int err = real(queue, buffer, CL_TRUE, offset, size, ptr, wait_count, wait_list, event);
  if (err == CL_SUCCESS) {
    for (size_t i = 0; i < size; i += 16) ((unsigned char *)ptr)[i] ^= 0x01;
  }
  return err;
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info what,
                                                size_t value_size, void *value,
                                                size_t *value_size_ret) {
  void *sym = next_symbol("clGetDeviceInfo");
  device_info_fn real;
  memcpy(&real, &sym, sizeof sym);
  const cl_int err = real(device, what, value_size, value, value_size_ret);
  if (err == CL_SUCCESS && what == CL_DEVICE_TYPE && value != NULL && getenv("PAES_CL_FAKE_GPU")) {
    *(cl_device_type *)value = CL_DEVICE_TYPE_GPU;
  }
  return err;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint count, cl_platform_id *platforms, cl_uint *found) {
  void *sym = next_symbol("clGetPlatformIDs");
  platform_ids_fn real;
  memcpy(&real, &sym, sizeof sym);
  const char *trace = getenv("PAES_CL_TRACE");
  if (trace != NULL) {
    FILE *log = fopen(trace, "a");
    if (log != NULL) {
      fputs("clGetPlatformIDs\n", log);
      fclose(log);
    }
  }
  return real(count, platforms, found);
}
