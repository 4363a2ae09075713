// weft: the VM's public API, everything. Include this or the one concept
// header you need (weft/weft.h includes this too).
//
//   weft/vm/value.h       values, refs and ref types
//   weft/vm/list.h        lists and bytes, the VM's own objects
//   weft/vm/module.h      modules: loading bytecode, native modules and
//                         their wait frames
//   weft/vm/context.h     contexts, modules linked together
//   weft/vm/invocation.h  calling a function on the calling thread
//   weft/vm/loop.h        the loop, many invocations on one thread
//   weft/vm/tensor_type.h declared names and tensor types of functions'
//                         values
//   weft/vm/hal.h         the hal module, HAL objects as refs, buffer views,
//                         the check of buffer views against declarations
#ifndef WEFT_VM_H_
#define WEFT_VM_H_

#include "weft/vm/context.h"
#include "weft/vm/hal.h"
#include "weft/vm/invocation.h"
#include "weft/vm/list.h"
#include "weft/vm/loop.h"
#include "weft/vm/module.h"
#include "weft/vm/tensor_type.h"
#include "weft/vm/value.h"

#endif  // WEFT_VM_H_
