// weft's command-line tools: one checked parse for every integer flag.
//
// weft-decode, weft-decode-gen, weft-run and weft-info take counts, ids
// and seeds on the command line. Each goes through weft_cli_parse_u64:
// decimal digits only (no sign, no spaces, no "0x", no trailing junk, no
// float), within [min, max], or a message naming the tool and the flag:
//
//   weft-decode: --steps takes an integer from 0 to 4294967295, not '-1'
//
// and false, which the tool answers with exit code 2 (bad usage).
#ifndef WEFT_TOOLS_CLI_NUMBER_H_
#define WEFT_TOOLS_CLI_NUMBER_H_

#include <stdbool.h>
#include <stdint.h>

// Parses |text| as a decimal integer in [|min|, |max|] into |*out_value|.
// On failure prints "|tool|: |flag| takes an integer from MIN to MAX, not
// 'TEXT'" on stderr, leaves |*out_value| as it was and returns false.
bool weft_cli_parse_u64(const char* tool, const char* flag, const char* text,
                        uint64_t min, uint64_t max, uint64_t* out_value);

// The same into a uint32_t (|max| at most UINT32_MAX).
bool weft_cli_parse_u32(const char* tool, const char* flag, const char* text,
                        uint32_t min, uint32_t max, uint32_t* out_value);

// The same without a message: true when |text| is a decimal integer in
// [|min|, |max|]. For lists, whose caller says what the list takes.
bool weft_cli_try_parse_u64(const char* text, uint64_t min, uint64_t max,
                            uint64_t* out_value);

#endif  // WEFT_TOOLS_CLI_NUMBER_H_
