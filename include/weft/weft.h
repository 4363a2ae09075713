// weft: everything. Include this or the one concept header you need.
#ifndef WEFT_WEFT_H_
#define WEFT_WEFT_H_

#include "weft/allocator.h"
#include "weft/buffer.h"
#include "weft/channel.h"
#include "weft/command_buffer.h"
#include "weft/device.h"
#include "weft/diagnostics.h"
#include "weft/driver.h"
#include "weft/executable.h"
#include "weft/fence.h"
#include "weft/file.h"
#include "weft/kernel_abi.h"
#include "weft/parameter_stream.h"
#include "weft/semaphore.h"
#include "weft/status.h"
#include "weft/time.h"
#include "weft/trace.h"
#include "weft/vm.h"

#endif  // WEFT_WEFT_H_
