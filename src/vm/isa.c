// weft VM: the instruction set table (see isa.h).
#include "vm/isa.h"

const weft_vm_opcode_info_t kWeftVmOpcodes[WEFT_VM_OP_COUNT_] = {
#define WEFT_VM_OPCODE_INFO(name, text, shape) \
  [WEFT_VM_OP_##name] = {text, WEFT_VM_SHAPE_##shape},
    WEFT_VM_OPCODES(WEFT_VM_OPCODE_INFO)
#undef WEFT_VM_OPCODE_INFO
};
