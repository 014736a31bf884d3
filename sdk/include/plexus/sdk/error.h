// The one exception type of the C++ SDK: a status code and a message.
// Kernels throw it through PX_SDK_CHECK (kernel.h), plugin and device
// methods through sdk::ThrowError (plugin.h); every SDK trampoline turns it
// into a status with this code, so nothing crosses the ABI.
#ifndef PLEXUS_SDK_ERROR_H_
#define PLEXUS_SDK_ERROR_H_

#include <exception>
#include <string>
#include <utility>

#include "plexus/plugin_api.h"

namespace plexus::sdk {

class Error : public std::exception {
 public:
  Error(PX_Code code, std::string message) : code_(code), message_(std::move(message)) {}
  PX_Code code() const { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  PX_Code code_;
  std::string message_;
};

// The name kernels have used for it.
using KernelError = Error;

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_ERROR_H_
