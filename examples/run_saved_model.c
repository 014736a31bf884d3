/* Runs one signature of a TensorFlow SavedModel through the Plexus C API:
 * the inputs come from .npy files and every output of the signature is
 * written as a .npy file (the C counterpart of `plexus run SAVEDMODEL_DIR`).
 *
 * Usage: plexus_run_saved_model DIR [--signature KEY] [--device DEV]
 *                               [--out OUT_DIR] [KEY=FILE.npy]...
 *   DIR        the SavedModel folder (holding saved_model.pb)
 *   KEY        a signature input key; FILE.npy its value (numbers, bools,
 *              or NumPy strings of dtype S or U)
 *   --out      writes output KEY to OUT_DIR/KEY.npy (the folder must exist);
 *              without it each output's dtype and shape are printed only
 *
 * Prints the device, then one line per output. Exits 0 on success and 1 on
 * any error, printing the failing step and the runtime's message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/c_api.h"

#define MAX_INPUTS 256

typedef struct {
  const char* dir;
  const char* signature;
  const char* device;
  const char* out_dir;
  const char* input_keys[MAX_INPUTS];
  const char* input_files[MAX_INPUTS];
  size_t num_inputs;
} arguments;

static int usage(void) {
  fprintf(stderr,
          "usage: plexus_run_saved_model DIR [--signature KEY] [--device DEV] [--out OUT_DIR] "
          "[KEY=FILE.npy]...\n");
  return 1;
}

/* 0 on success; prints what is wrong otherwise. */
static int parse(int argc, char** argv, arguments* args) {
  int i;
  memset(args, 0, sizeof(*args));
  args->signature = "serving_default";
  if (argc < 2) return usage();
  args->dir = argv[1];
  for (i = 2; i < argc; ++i) {
    const char* arg = argv[i];
    const char* eq = strchr(arg, '=');
    if ((!strcmp(arg, "--signature") || !strcmp(arg, "--device") || !strcmp(arg, "--out"))) {
      if (i + 1 >= argc) return usage();
      if (!strcmp(arg, "--signature")) args->signature = argv[++i];
      else if (!strcmp(arg, "--device")) args->device = argv[++i];
      else args->out_dir = argv[++i];
    } else if (eq != NULL && eq != arg && args->num_inputs < MAX_INPUTS) {
      argv[i][eq - arg] = '\0';
      args->input_keys[args->num_inputs] = arg;
      args->input_files[args->num_inputs] = eq + 1;
      ++args->num_inputs;
    } else {
      fprintf(stderr, "plexus_run_saved_model: unexpected argument '%s'\n", arg);
      return usage();
    }
  }
  return 0;
}

static void print_shape(const px_tensor* tensor) {
  int d;
  printf("%s [", px_dtype_name(px_tensor_dtype(tensor)));
  for (d = 0; d < px_tensor_ndim(tensor); ++d) {
    printf(d ? ", %lld" : "%lld", (long long)px_tensor_dim(tensor, d));
  }
  printf("]");
}

/* Runs the signature with the loaded inputs and writes or prints each
 * output. Returns 0 on success. */
static int run_signature(px_saved_model* model, const arguments* args,
                         px_tensor* const* inputs, px_status* status) {
  size_t num_outputs = 0, i;
  const char** output_keys;
  px_tensor** outputs;
  int failed = 0;
  if (px_saved_model_signature_arity(model, args->signature, NULL, &num_outputs, status) !=
      PX_STATUS_OK) {
    fprintf(stderr, "signature: %s\n", px_status_message(status));
    return 1;
  }
  output_keys = calloc(num_outputs + 1, sizeof(*output_keys));
  outputs = calloc(num_outputs + 1, sizeof(*outputs));
  if (output_keys == NULL || outputs == NULL) {
    fprintf(stderr, "out of memory\n");
    free(output_keys);
    free(outputs);
    return 1;
  }
  for (i = 0; i < num_outputs && !failed; ++i) {
    px_signature_tensor_info info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (px_saved_model_signature_output(model, args->signature, i, &info, status) !=
        PX_STATUS_OK) {
      fprintf(stderr, "output %zu: %s\n", i, px_status_message(status));
      failed = 1;
    }
    output_keys[i] = info.key;
  }
  if (!failed && px_saved_model_run(model, args->signature, args->input_keys,
                                    (const px_tensor* const*)inputs, args->num_inputs,
                                    output_keys, num_outputs, outputs,
                                    status) != PX_STATUS_OK) {
    fprintf(stderr, "run: %s\n", px_status_message(status));
    failed = 1;
  }
  for (i = 0; i < num_outputs && !failed; ++i) {
    printf("%s: ", output_keys[i]);
    print_shape(outputs[i]);
    printf("\n");
    if (args->out_dir != NULL) {
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s.npy", args->out_dir, output_keys[i]);
      if (px_tensor_write_npy(outputs[i], path, status) != PX_STATUS_OK) {
        fprintf(stderr, "writing %s: %s\n", path, px_status_message(status));
        failed = 1;
      }
    }
  }
  for (i = 0; i < num_outputs; ++i) px_tensor_destroy(outputs[i]);
  free(output_keys);
  free(outputs);
  return failed;
}

int main(int argc, char** argv) {
  arguments args;
  px_status* status;
  px_runtime* runtime = NULL;
  px_saved_model* model = NULL;
  px_tensor* inputs[MAX_INPUTS] = {0};
  size_t i;
  int failed = 0;
  if (parse(argc, argv, &args) != 0) return 1;
  status = px_status_create();
  if (px_runtime_create(NULL, &runtime, status) != PX_STATUS_OK) {
    fprintf(stderr, "creating the runtime: %s\n", px_status_message(status));
    px_status_destroy(status);
    return 1;
  }
  for (i = 0; i < args.num_inputs && !failed; ++i) {
    if (px_tensor_read_npy(args.input_files[i], &inputs[i], status) != PX_STATUS_OK) {
      fprintf(stderr, "input '%s': %s\n", args.input_keys[i], px_status_message(status));
      failed = 1;
    }
  }
  if (!failed && px_saved_model_load(runtime, args.dir, NULL, 0, args.device, &model, status) !=
                     PX_STATUS_OK) {
    fprintf(stderr, "loading %s: %s\n", args.dir, px_status_message(status));
    failed = 1;
  }
  if (!failed) {
    printf("device: %s\n", px_saved_model_device_name(model));
    failed = run_signature(model, &args, inputs, status);
  }
  px_saved_model_destroy(model);
  for (i = 0; i < args.num_inputs; ++i) px_tensor_destroy(inputs[i]);
  px_runtime_destroy(runtime);
  px_status_destroy(status);
  return failed ? 1 : 0;
}
