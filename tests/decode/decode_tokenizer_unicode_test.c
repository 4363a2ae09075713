// The decode example's "gpt2" words over Unicode's general categories
// (examples/decode/decode_tokenizer.h: \p{L} the letters L*, \p{N} the
// numbers N*, \s Unicode's White_Space, and marks, format characters,
// punctuation and symbols none of them):
//  - Meta's Llama 3 ids for three texts whose marks (a nukta, vowel
//    signs, an anusvara, U+FE0F) weft once took for letters, encoded with
//    the part of Meta's vocabulary they reach, at Meta's ids, and Meta's
//    merges in Meta's order;
//  - the words Llama 3's pattern and GPT-2's make of Khmer, Thai and
//    Tamil (vowel signs and viramas are marks), an emoji ZWJ sequence
//    (the joiner is a format character), U+200B, "・", "™", Thai and
//    Bengali digits (numbers), U+FEFF and U+0085 (\s is White_Space:
//    U+0085 is, U+FEFF is not) and "'ſ" (Llama 3's (?i: folds ſ to s),
//    each worked out by hand from the pattern and the characters'
//    categories (Unicode 15's, which utf8proc 2.8 has).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_tokenizer.h"
#include "decode_test_util.h"

//===----------------------------------------------------------------------===//
// Meta's ids
//===----------------------------------------------------------------------===//

// Llama 3's vocabulary has 128,256 tokens and 280,147 merges; these are
// the part of it the three texts below can use: every token whose text
// lies within one of the texts and every merge that makes one of those,
// with its rank (its index in Meta's list), so that any split of a text
// into words encodes as it would with the whole vocabulary (a word's
// merges make only tokens within it), weft's old wrong splits too. A
// token is written as the bytes it stands for (the vocabulary holds them
// as GPT-2's byte characters); "\xE0\xA4" is the first two bytes of a
// Devanagari letter, "\xAD\x90" the last two of ⭐. Taken, with the
// texts' ids, from the npm package llama3-tokenizer-js 1.2.0, whose data
// are Meta's vocabulary and merges, by a node script (not part of the
// tree): the tokens within each text, the merges that make them, and
// encode(text, {bos: false, eos: false}).
typedef struct meta_token_t {
  uint32_t id;
  const char* bytes;
} meta_token_t;
static const meta_token_t kMetaTokens[] = {
    {259, " t"},
    {270, " th"},
    {285, "is"},
    {339, "th"},
    {420, " this"},
    {576, "this"},
    {2928, " \xE2"},
    {5619, "\xE0\xA4"},
    {6151, "hi"},
    {12906, "\xE0\xA5"},
    {15272, " \xE0\xA4"},
    {24810, "\xE0\xA4\xBE"},  // U+093E
    {26301, "his"},
    {29082, " \xE0"},
    {30337, "\xEF\xB8"},
    {31643, "\xEF\xB8\x8F"},  // U+FE0F
    {32511, "\xE0\xA4\xBE\xE0\xA4"},
    {35470, "\xE0\xA5\x87"},  // U+0947
    {39951, "\xE0\xA4\xBF"},  // U+093F
    {43411, "\xE0\xA4\xBF\xE0\xA4"},
    {44747, "\xE0\xA5\x80"},  // U+0940
    {45279, "\xE0\xA4\xB0"},  // U+0930
    {61196, "\xE0\xA4\xA8"},  // U+0928
    {62428, " thi"},
    {65804, "\xE0\xA4\x95"},   // U+0915
    {69258, " \xE0\xA4\xB8"},  // ␠ U+0938
    {73414, "\xE0\xA4\x82"},   // U+0902
    {73753, "\xE0\xA5\x81"},   // U+0941
    {79468, "\xE0\xA4\xB8"},   // U+0938
    {84736, " \xE0\xA4\xAA"},  // ␠ U+092A
    {85410, " \xE0\xA4\xB9"},  // ␠ U+0939
    {87262, "\xE0\xA4\xAA"},   // U+092A
    {95048, "\xE0\xA4\xB9"},   // U+0939
    {99834, "\xAD\x90"},
    {100266, "\xE0\xA5\x88"},              // U+0948
    {100278, "\xE0\xA5\xA4"},              // U+0964
    {100280, "\xE0\xA4\x97"},              // U+0917
    {100295, "\xE0\xA5\x82"},              // U+0942
    {100296, "\xE0\xA4\xA6"},              // U+0926
    {100306, "\xE0\xA4\xBE\xE0\xA4\xA8"},  // U+093E U+0928
    {100346, "\xE0\xA4\x9C"},              // U+091C
    {100395, "\xE0\xA4\xBC"},              // U+093C
    {100401, "\xE0\xA5\x81\xE0\xA4"},
    {100404, " \xE0\xA4\x8F"},              // ␠ U+090F
    {100471, "\xE0\xA4\xBF\xE0\xA4\x8F"},   // U+093F U+090F
    {100549, " \xE0\xA4\x8F\xE0\xA4\x95"},  // ␠ U+090F U+0915
    {100574, "\xE0\xA4\xB6"},               // U+0936
    {100639, " \xE0\xA4\x96"},              // ␠ U+0916
    {100714, "\xE0\xA4\x8F"},               // U+090F
    {100924, "\xE0\xA4\xAB"},               // U+092B
    {100929, "\xE0\xA4\xBF\xE0\xA4\x82"},   // U+093F U+0902
    {100979, "\xE0\xA4\x96"},               // U+0916
    {101411, "\xE0\xA5\x88,"},              // U+0948 ,
    {101804, "\xE0\xA4\x82\xE0\xA4\xA6"},   // U+0902 U+0926
    {102009, "\xE0\xA4\xBC\xE0\xA4\xBE"},   // U+093C U+093E
    {102088, "\xE0\xA4\xA2"},               // U+0922
    {103855, "\xE0\xA5\x82\xE0\xA4\xA8"},   // U+0942 U+0928
    {104538, "\xE0\xA4\xBC\xE0\xA4\xBF"},   // U+093C U+093F
    {104759, "\xB8\x8F"},
    {107377, "\xE0\xA5\x81\xE0\xA4\xB6"},  // U+0941 U+0936
    {109261, "\xA5\xA4"},
    {111183, " \xE0\xA4\xB8\xE0\xA4\xAB"},  // ␠ U+0938 U+092B
    {111354, " \xE0\xA4\xAA\xE0\xA4\xA2"},  // ␠ U+092A U+0922
    {111893, "\xE0\xA4\x8F\xE0\xA4\x95"},   // U+090F U+0915
    {113605, "\xE0\xA4\xBC\xE0\xA4\xB0"},   // U+093C U+0930
    {121390, "\xAD\x90\xEF\xB8\x8F"},
};

typedef struct meta_merge_t {
  uint32_t rank;
  const char* left;
  const char* right;
} meta_merge_t;
static const meta_merge_t kMetaMerges[] = {
    {5, " ", "t"},
    {23, " ", "th"},
    {24, " t", "h"},
    {41, "i", "s"},
    {133, "t", "h"},
    {266, " ", "this"},
    {267, " t", "his"},
    {268, " th", "is"},
    {269, " thi", "s"},
    {573, "t", "his"},
    {574, "th", "is"},
    {6598, " ", "\xE2"},
    {14293, "\xE0", "\xA4"},
    {15747, "h", "i"},
    {34571, "\xE0", "\xA5"},
    {40943, " ", "\xE0\xA4"},
    {40944, " \xE0", "\xA4"},
    {65743, "\xE0\xA4", "\xBE"},
    {69503, "h", "is"},
    {69504, "hi", "s"},
    {76625, " ", "\xE0"},
    {79837, "\xEF", "\xB8"},
    {82964, "\xEF", "\xB8\x8F"},
    {82965, "\xEF\xB8", "\x8F"},
    {85101, "\xE0\xA4\xBE", "\xE0\xA4"},
    {92340, "\xE0\xA5", "\x87"},
    {103349, "\xE0\xA4", "\xBF"},
    {111750, "\xE0\xA4\xBF", "\xE0\xA4"},
    {114885, "\xE0\xA5", "\x80"},
    {116100, "\xE0\xA4", "\xB0"},
    {152821, "\xE0\xA4", "\xA8"},
    {155614, " t", "hi"},
    {155615, " th", "i"},
    {163032, "\xE0\xA4", "\x95"},
    {170673, " ", "\xE0\xA4\xB8"},
    {170674, " \xE0\xA4", "\xB8"},
    {179726, "\xE0\xA4", "\x82"},
    {180441, "\xE0\xA5", "\x81"},
    {192706, "\xE0\xA4", "\xB8"},
    {203947, " ", "\xE0\xA4\xAA"},
    {203948, " \xE0\xA4", "\xAA"},
    {205369, " ", "\xE0\xA4\xB9"},
    {205370, " \xE0\xA4", "\xB9"},
    {209210, "\xE0\xA4", "\xAA"},
    {225300, "\xE0\xA4", "\xB9"},
    {235137, "\xAD", "\x90"},
    {235987, "\xE0\xA5", "\x88"},
    {236007, "\xE0", "\xA5\xA4"},
    {236008, "\xE0\xA5", "\xA4"},
    {236010, "\xE0\xA4", "\x97"},
    {236034, "\xE0\xA5", "\x82"},
    {236035, "\xE0\xA4", "\xA6"},
    {236048, "\xE0\xA4\xBE", "\xE0\xA4\xA8"},
    {236049, "\xE0\xA4\xBE\xE0\xA4", "\xA8"},
    {236110, "\xE0\xA4", "\x9C"},
    {236184, "\xE0\xA4", "\xBC"},
    {236191, "\xE0\xA5\x81", "\xE0\xA4"},
    {236195, " ", "\xE0\xA4\x8F"},
    {236196, " \xE0\xA4", "\x8F"},
    {236299, "\xE0\xA4\xBF", "\xE0\xA4\x8F"},
    {236300, "\xE0\xA4\xBF\xE0\xA4", "\x8F"},
    {236418, " ", "\xE0\xA4\x8F\xE0\xA4\x95"},
    {236419, " \xE0\xA4\x8F", "\xE0\xA4\x95"},
    {236456, "\xE0\xA4", "\xB6"},
    {236553, " ", "\xE0\xA4\x96"},
    {236554, " \xE0\xA4", "\x96"},
    {236668, "\xE0\xA4", "\x8F"},
    {237005, "\xE0\xA4", "\xAB"},
    {237012, "\xE0\xA4\xBF", "\xE0\xA4\x82"},
    {237013, "\xE0\xA4\xBF\xE0\xA4", "\x82"},
    {237089, "\xE0\xA4", "\x96"},
    {237810, "\xE0\xA5\x88", ","},
    {238443, "\xE0\xA4\x82", "\xE0\xA4\xA6"},
    {238777, "\xE0\xA4\xBC", "\xE0\xA4\xBE"},
    {238911, "\xE0\xA4", "\xA2"},
    {241910, "\xE0\xA5\x82", "\xE0\xA4\xA8"},
    {243030, "\xE0\xA4\xBC", "\xE0\xA4\xBF"},
    {243395, "\xB8", "\x8F"},
    {247752, "\xE0\xA5\x81", "\xE0\xA4\xB6"},
    {247753, "\xE0\xA5\x81\xE0\xA4", "\xB6"},
    {250792, "\xA5", "\xA4"},
    {253923, " \xE0\xA4\xB8", "\xE0\xA4\xAB"},
    {254207, " \xE0\xA4\xAA", "\xE0\xA4\xA2"},
    {255069, "\xE0\xA4\x8F", "\xE0\xA4\x95"},
    {257850, "\xE0\xA4\xBC", "\xE0\xA4\xB0"},
    {270109, "\xAD\x90", "\xEF\xB8\x8F"},
};

#define META_VOCAB 128256u
#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))

// |bytes| as GPT-2's byte characters, the text of the token that stands
// for them, in a string of its own.
static char* gpt2_text(const char* bytes) {
  char* text = (char*)malloc(strlen(bytes) * 2 + 1);
  assert_non_null(text);
  size_t n = 0;
  for (const char* b = bytes; *b; ++b) {
    n += decode_gpt2_byte_text((uint8_t)*b, text + n);
  }
  text[n] = '\0';
  return text;
}

// A llama-bpe tokenizer of Meta's 128,256 ids: the 256 byte characters
// at 0..255 in Meta's order (the printable bytes '!'..'~', 0xA1..0xAC,
// 0xAE..0xFF first, then the rest, each run in byte order: GPT-2's
// characters in code point order), kMetaTokens at their ids, and every
// other id a filler of the form "filler N", which holds a space and so
// is never a word's text or part of one (GPT-2's characters have none);
// the merges kMetaMerges, in their order.
static decode_tokenizer_t* meta_tokenizer(void) {
  decode_vocab_t vocab;
  memset(&vocab, 0, sizeof(vocab));
  vocab.kind = DECODE_TOKENIZER_BPE;
  vocab.pre = DECODE_PRETOKENIZER_LLAMA3;
  vocab.bos = vocab.eos = vocab.unknown = -1;
  vocab.count = META_VOCAB;
  vocab.tokens = (char**)calloc(META_VOCAB, sizeof(char*));
  assert_non_null(vocab.tokens);
  uint32_t id = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      if (printable != (pass == 0)) continue;
      char text[3];
      decode_gpt2_byte_text((uint8_t)b, text);
      vocab.tokens[id++] = strdup(text);
    }
  }
  for (size_t i = 0; i < ARRAY_COUNT(kMetaTokens); ++i) {
    assert_null(vocab.tokens[kMetaTokens[i].id]);
    vocab.tokens[kMetaTokens[i].id] = gpt2_text(kMetaTokens[i].bytes);
  }
  for (uint32_t i = 0; i < META_VOCAB; ++i) {
    if (vocab.tokens[i]) continue;
    char filler[32];
    snprintf(filler, sizeof(filler), "filler %u", i);
    vocab.tokens[i] = strdup(filler);
  }
  vocab.merge_count = (uint32_t)ARRAY_COUNT(kMetaMerges);
  vocab.merges = (char**)calloc(vocab.merge_count, sizeof(char*));
  assert_non_null(vocab.merges);
  for (uint32_t i = 0; i < vocab.merge_count; ++i) {
    // In Meta's order (ranks rising); only the order counts.
    if (i > 0) assert_true(kMetaMerges[i].rank > kMetaMerges[i - 1].rank);
    char* left = gpt2_text(kMetaMerges[i].left);
    char* right = gpt2_text(kMetaMerges[i].right);
    vocab.merges[i] = (char*)malloc(strlen(left) + strlen(right) + 2);
    assert_non_null(vocab.merges[i]);
    sprintf(vocab.merges[i], "%s %s", left, right);
    free(left);
    free(right);
  }
  decode_tokenizer_t* tokenizer = NULL;
  decode_test_assert_ok(
      decode_tokenizer_create(&vocab, "Meta's ids, llama-bpe", &tokenizer));
  decode_vocab_deinitialize(&vocab);
  return tokenizer;
}

// |text| encodes (no BOS) to the |expected_count| ids |expected|, which
// decode back to |text|.
static void expect_meta_ids(const decode_tokenizer_t* tokenizer,
                            const char* text, const uint32_t* expected,
                            size_t expected_count) {
  decode_test_expect_ids(tokenizer, text, expected, expected_count);
  char back[256];
  char* piece = (char*)malloc(decode_tokenizer_max_token_bytes(tokenizer));
  assert_non_null(piece);
  decode_text_stream_t stream;
  decode_text_stream_initialize(&stream, DECODE_TEXT_AT_START);
  size_t length = 0;
  for (size_t i = 0; i < expected_count; ++i) {
    const size_t n =
        decode_text_stream_next(tokenizer, &stream, expected[i], piece);
    assert_true(length + n < sizeof(back));
    memcpy(back + length, piece, n);
    length += n;
  }
  length += decode_text_stream_flush(&stream, back + length);
  back[length] = '\0';
  free(piece);
  assert_string_equal(back, text);
}

// The words (Llama 3's pattern, as in decode_tokenizer_test.c: A the
// contractions, B [^\r\n\p{L}\p{N}]?\p{L}+, C \p{N}{1,3},
// D  ?[^\s\p{L}\p{N}]+[\r\n]*, E..G the whitespace), worked out by
// hand; the ids are Meta's (above). A word that is a token whole is
// that token (ignore_merges); the others merge by the ranks.
//  "क़ानून": क U+0915, the nukta U+093C (Mn), the vowel sign ा U+093E
//    (Mc), न U+0928, the vowel sign ू U+0942 (Mn), न. B "क" (the
//    letters stop at the nukta); at the nukta B fails (it may lead,
//    but ा after it is no letter), C fails, D takes the two marks "़ा"
//    and stops at न; B "न"; B "ून" (the vowel sign leads, न follows).
//    Each word is a token: [65804, 102009, 61196, 103855]. With the
//    marks taken for letters the text was one word, no token.
//  "ज़िंदगी एक सफ़र है, ख़ुशी से पढ़िए।": B "ज"; D "़िं" (the nukta,
//    the vowel sign ि U+093F (Mc), the anusvara ं U+0902 (Mn); the
//    letter द ends it); B "दग"; D "ी" (U+0940, Mc; the space, \s,
//    ends it); B " एक"; B " सफ"; B "़र" (the nukta leads); B " ह";
//    D "ै," (U+0948 (Mn) and the comma); B " ख"; D "़ु" (the nukta and
//    U+0941 (Mn)); B "श"; D "ी"; B " स"; D "े" (U+0947, Mn); B " पढ";
//    D "़ि"; B "ए"; D "।" (U+0964, Po). Each a token but "़िं" (to
//    ़ 100395 and िं 100929), "दग" (द 100296, ग 100280) and "़ु"
//    (़ 100395, ु 73753): 22 ids.
//  "I ⭐️ this, ⭐️⭐️": ⭐ U+2B50 (So), then U+FE0F, the emoji
//    variation selector (Mn). B "I"; at " ⭐️" B fails (a space may
//    lead, ⭐ is no letter), D takes the space and the two, up to the
//    next space; B " this"; D "," (the space after it is \s); D
//    " ⭐️⭐️" (a space, then four). " ⭐️" is no token: its bytes
//    20 E2 AD 90 EF B8 8F merge to " \xE2" (2928) and "\xAD\x90"
//    with U+FE0F (121390); " ⭐️⭐️" to those, then 0xE2's own token
//    (158: no merge joins it to the bytes around it) and 121390
//    again: 9 ids. With U+FE0F taken for a letter (weft's hand-written
//    classes did), the words were " ⭐", "\uFE0F", " this", ",", " ⭐",
//    "\uFE0F", "⭐\uFE0F": 11 ids.
static void test_meta_ids(void** state) {
  (void)state;
  decode_tokenizer_t* tokenizer = meta_tokenizer();
  {
    const uint32_t expected[] = {65804, 102009, 61196, 103855};
    expect_meta_ids(tokenizer, "क़ानून", expected, ARRAY_COUNT(expected));
  }
  {
    const uint32_t expected[] = {100346, 100395, 100929, 100296, 100280, 44747,
                                 100549, 111183, 113605, 85410,  101411, 100639,
                                 100395, 73753,  100574, 44747,  69258,  35470,
                                 111354, 104538, 100714, 100278};
    expect_meta_ids(tokenizer, "ज़िंदगी एक सफ़र है, ख़ुशी से पढ़िए।", expected,
                    ARRAY_COUNT(expected));
  }
  {
    const uint32_t expected[] = {40,   2928,   121390, 420,   11,
                                 2928, 121390, 158,    121390};
    expect_meta_ids(tokenizer, "I \u2B50\uFE0F this, \u2B50\uFE0F\u2B50\uFE0F",
                    expected, ARRAY_COUNT(expected));
  }
  decode_tokenizer_free(tokenizer);
}

//===----------------------------------------------------------------------===//
// Words, by hand
//===----------------------------------------------------------------------===//

// Llama 3's words (A..G as above), each character's category named:
//  "ភាសាខ្មែរ" (Khmer: ភ, ស, ខ, ម, រ Lo; the vowel signs ា U+17B6 and ែ
//    U+17C2 Mc; the coeng ្ U+17D2 Mn): B "ភ"; then each mark leads the
//    letter after it (B): "ាស", "ាខ", "្ម", "ែរ".
//  "ឆ្នាំ ២០២៤": B "ឆ"; B "្ន"; at ា B fails (ំ U+17C6, Mn, is no
//    letter), D "ាំ" (ended by the space, \s); at " ២" B, C, D (a digit is
//    no symbol) and E fail, F fails (one space, then \S), G " "; C "២០២"
//    (Khmer digits, Nd), C "៤".
//  "สวัสดี" (Thai: ส ว ด Lo, ั U+0E31 and ี U+0E35 Mn): B "สว"; B "ัสด";
//    D "ี".
//  "ปี ๒๕๖๗" (๒๕๖๗ Thai digits, Nd): B "ป"; D "ี"; G " "; C "๒๕๖"; C "๗".
//  "தமிழ்" (Tamil: ி U+0BBF Mc, the virama ் U+0BCD Mn): B "தம"; B "ிழ";
//    D "்".
//  "a \U0001F468\u200D\U0001F469\u200D\U0001F467!" (a man, a woman and
//    a girl, So, joined by the zero width joiner U+200D, Cf): B "a"; D
//    the space, the five and the "!" (none \s, letter or number).
//  "\u2764\uFE0Fx" (❤ U+2764 So, then U+FE0F Mn): B fails at ❤ (what
//    follows it is no letter), D "\u2764\uFE0F"; B "x".
//  "a\u200Bb \u200B c" (U+200B, Cf): B "a"; B "\u200Bb" (it leads the
//    letter); D " \u200B" (a space and it; the next space ends D); B " c".
//  "コーヒー・タイム" (ー U+30FC Lm, a letter; ・ U+30FB Po): B "コーヒー";
//    B "・タイム".
//  "Weft™ rocks" (™ U+2122 So): B "Weft"; D "™"; B " rocks".
//  "১২৩৪৫" (Bengali digits, Nd): C "১২৩", C "৪৫".
//  "৳১০০" (৳ U+09F3 Sc): D "৳" (the number ends it); C "১০০".
//  "\uFEFF\uFEFFx" (U+FEFF, Cf, not White_Space): B fails at the first
//    (the second is no letter), D takes both; B "x". (JavaScript's \s
//    has U+FEFF: llama3-tokenizer-js makes "\uFEFF", "\uFEFFx".)
//  "\u0085\u0085x" (U+0085, Cc and White_Space; not [\r\n]): B fails, D
//    fails (\s), E fails (no line break), F "\u0085" (the two back off
//    one, to a \s); B "\u0085x". (JavaScript's \s lacks U+0085.)
//  "x'ſtuff" (ſ U+017F, Ll, whose simple case folding is s): B "x"; A
//    "'ſ" (the (?i: group folds case as Unicode does); B "tuff".
//    (llama3-tokenizer-js folds ASCII's case alone: "x", "'ſtuff".)
static void test_llama3_unicode_words(void** state) {
  (void)state;
  const decode_pretokenizer_t p = DECODE_PRETOKENIZER_LLAMA3;
  decode_test_expect_words(p, "ភាសាខ្មែរ",
                           DECODE_TEST_WORDS("ភ", "ាស", "ាខ", "្ម", "ែរ"));
  decode_test_expect_words(p, "ឆ្នាំ ២០២៤",
                           DECODE_TEST_WORDS("ឆ", "្ន", "ាំ", " ", "២០២", "៤"));
  decode_test_expect_words(p, "สวัสดี", DECODE_TEST_WORDS("สว", "ัสด", "ี"));
  decode_test_expect_words(p, "ปี ๒๕๖๗",
                           DECODE_TEST_WORDS("ป", "ี", " ", "๒๕๖", "๗"));
  decode_test_expect_words(p, "தமிழ்", DECODE_TEST_WORDS("தம", "ிழ", "்"));
  decode_test_expect_words(
      p, "a \U0001F468\u200D\U0001F469\u200D\U0001F467!",
      DECODE_TEST_WORDS("a", " \U0001F468\u200D\U0001F469\u200D\U0001F467!"));
  decode_test_expect_words(p, "\u2764\uFE0Fx",
                           DECODE_TEST_WORDS("\u2764\uFE0F", "x"));
  decode_test_expect_words(p, "a\u200Bb \u200B c",
                           DECODE_TEST_WORDS("a", "\u200Bb", " \u200B", " c"));
  decode_test_expect_words(p, "コーヒー・タイム",
                           DECODE_TEST_WORDS("コーヒー", "・タイム"));
  decode_test_expect_words(p, "Weft™ rocks",
                           DECODE_TEST_WORDS("Weft", "™", " rocks"));
  decode_test_expect_words(p, "১২৩৪৫", DECODE_TEST_WORDS("১২৩", "৪৫"));
  decode_test_expect_words(p, "৳১০০", DECODE_TEST_WORDS("৳", "১০০"));
  decode_test_expect_words(p, "\uFEFF\uFEFFx",
                           DECODE_TEST_WORDS("\uFEFF\uFEFF", "x"));
  decode_test_expect_words(p, "\xC2\x85\xC2\x85x",
                           DECODE_TEST_WORDS("\xC2\x85", "\xC2\x85x"));
  decode_test_expect_words(p, "x'ſtuff", DECODE_TEST_WORDS("x", "'ſ", "tuff"));
}

// GPT-2's words on some of the same texts, by its pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|
//   \s+(?!\S)|\s+
// over the same categories: no mark leads letters, so each run of marks
// is a word of its own between the letters; numbers take a space before
// them and go whole; the contractions are lower case only, so "'" and
// "ſtuff" part.
static void test_gpt2_unicode_words(void** state) {
  (void)state;
  const decode_pretokenizer_t p = DECODE_PRETOKENIZER_GPT2;
  decode_test_expect_words(
      p, "ភាសាខ្មែរ",
      DECODE_TEST_WORDS("ភ", "ា", "ស", "ា", "ខ", "្", "ម", "ែ", "រ"));
  decode_test_expect_words(p, "क़ानून",
                           DECODE_TEST_WORDS("क", "़ा", "न", "ू", "न"));
  decode_test_expect_words(p, "ปี ๒๕๖๗", DECODE_TEST_WORDS("ป", "ี", " ๒๕๖๗"));
  decode_test_expect_words(p, "a\u200Bb",
                           DECODE_TEST_WORDS("a", "\u200B", "b"));
  decode_test_expect_words(p, "コーヒー・タイム",
                           DECODE_TEST_WORDS("コーヒー", "・", "タイム"));
  decode_test_expect_words(p, "১২৩৪৫", DECODE_TEST_WORDS("১২৩৪৫"));
  decode_test_expect_words(p, "x'ſtuff", DECODE_TEST_WORDS("x", "'", "ſtuff"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_meta_ids),
      cmocka_unit_test(test_llama3_unicode_words),
      cmocka_unit_test(test_gpt2_unicode_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
