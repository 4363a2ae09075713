// weft benchmarks: file I/O. A large file read into one buffer (FileRead)
// and many files of one parameter set read into as many buffers
// (ParameterStream), with weft's queue reads and parameter streams beside a
// plain pread loop and mmap + memcpy, page cache warm and cold.
//
//   FileRead/<impl>/<warm|cold>          one 1 GiB file into one 1 GiB buffer
//   ParameterStream/<impl>/<warm|cold>   64 files x 16 MiB into 64 buffers
//
// Implementations:
//   weft-io_uring[-1read]  weft_device_queue_read on
//                          "local-task?file_io=io_uring": 4 MiB reads all
//                          submitted at once, each signalling its own
//                          semaphore (host waits for all), or one read of
//                          the whole file
//   weft-threads[-1read]   the same on "local-task?file_io=threads"
//   weft-io_uring-stream   weft_parameter_stream_load of one span, 4 MiB
//                          chunks, 64 reads in flight
//   pread                  a pread loop on the calling thread
//   mmap                   mmap, memcpy, munmap
//   weft-stream            weft_parameter_stream_load of 64 spans on
//                          "local-task" with the default options
//   pread-sequential       pread of one file after another
// Every destination (weft buffer or malloc'd memory) is touched before
// timing.
//
// WEFT_BENCH_FILE_MB=N (the smoke test sets 16) makes the FileRead file N MiB
// and the ParameterStream files N/64 MiB each.
//
// The files are created once per process, on first use, in a directory made
// with mkdtemp under $TMPDIR (default /tmp), filled with a pattern that
// depends on the file and the offset, written back to disk (so that their
// pages are clean and can be dropped) and removed at exit. Every row checks
// one 8-byte word per 4 KiB page of what its last iteration read.
//
// Warm: the row reads everything once before timing, so the timed reads come
// from the page cache. Cold: before every timed iteration (timing paused)
// posix_fadvise(POSIX_FADV_DONTNEED) drops the files' pages and mincore
// checks that none stayed resident; counter cold_ok is 1 when every eviction
// left no page behind. Where the file system keeps the pages (tmpfs) the row
// is skipped with "page cache eviction unavailable".
//
// Counters: GBps (bytes per second of wall time / 1e9) and bytes (read per
// iteration).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "weft/parameter_stream.h"

namespace weft_bench {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPageBytes = 4096;
// FileRead's file size without WEFT_BENCH_FILE_MB.
constexpr uint64_t kDefaultFileMiB = 1024;
// Files (and buffers) in one ParameterStream iteration.
constexpr uint32_t kParameterFileCount = 64;
// Bytes one queue read moves in the chunked weft FileRead rows.
constexpr uint64_t kChunkBytes = 4 * kMiB;
// Bytes written per call while creating the files.
constexpr uint64_t kWriteBlockBytes = 4 * kMiB;

enum class Cache { kWarm, kCold };

const char* CacheName(Cache cache) {
  return cache == Cache::kWarm ? "warm" : "cold";
}

std::string ErrnoText(int error) { return std::strerror(error); }

// FileRead's file size in bytes (WEFT_BENCH_FILE_MB MiB, default 1 GiB).
// 0 when the variable is not a positive number of MiB.
uint64_t FileReadBytes() {
  const char* text = std::getenv("WEFT_BENCH_FILE_MB");
  if (text == nullptr || *text == '\0') return kDefaultFileMiB * kMiB;
  char* end = nullptr;
  unsigned long long mib = std::strtoull(text, &end, 10);
  if (*end != '\0' || mib == 0 || mib > (1ull << 20)) return 0;
  return mib * kMiB;
}

// The pattern word at byte |offset| (a multiple of 8) of file |file_index|.
uint64_t PatternWord(uint32_t file_index, uint64_t offset) {
  return (offset / 8 + 1) * 0x9E3779B97F4A7C15ull ^
         (static_cast<uint64_t>(file_index) << 56);
}

// Checks one word per page of |data|, the contents of file |file_index|.
bool CheckPattern(benchmark::State& state, const char* what,
                  uint32_t file_index, const uint8_t* data, uint64_t length) {
  for (uint64_t offset = 0; offset + 8 <= length; offset += kPageBytes) {
    // A different word of each page, so that a page-sized shift shows.
    uint64_t word_offset = offset + (offset / kPageBytes % 512) * 8;
    if (word_offset + 8 > length) word_offset = offset;
    uint64_t word;
    std::memcpy(&word, data + word_offset, sizeof(word));
    if (word != PatternWord(file_index, word_offset)) {
      std::string message = std::string(what) + ": file " +
                            std::to_string(file_index) + " byte " +
                            std::to_string(word_offset) +
                            " does not hold the file's contents";
      state.SkipWithError(message.c_str());
      return false;
    }
  }
  return true;
}

// A name for a statfs f_type, for messages.
std::string FileSystemName(uint64_t magic) {
  static const struct {
    uint64_t magic;
    const char* name;
  } kNames[] = {{0xEF53, "ext4"},
                {0x01021994, "tmpfs"},
                {0x58465342, "xfs"},
                {0x9123683E, "btrfs"},
                {0x794C7630, "overlayfs"}};
  for (const auto& entry : kNames) {
    if (entry.magic == magic) return entry.name;
  }
  char hex[48];
  std::snprintf(hex, sizeof(hex), "file system 0x%llx",
                static_cast<unsigned long long>(magic));
  return hex;
}

// Paths to remove if the process is interrupted (SIGINT, SIGTERM, SIGHUP)
// before the FileSet destructors run: 2 GiB left behind in /tmp otherwise.
// Fixed storage, so the handler only reads memory and calls unlink/rmdir.
namespace cleanup {
constexpr int kMaxPaths = 160;
constexpr size_t kMaxPathBytes = 256;
char g_paths[kMaxPaths][kMaxPathBytes];
volatile sig_atomic_t g_count = 0;

void OnSignal(int signal_number) {
  // Newest first: the files, then their directory.
  for (int i = g_count - 1; i >= 0; --i) {
    if (unlink(g_paths[i]) != 0) rmdir(g_paths[i]);
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// Remembers |path| (a file, or a directory registered before its files).
void Add(const std::string& path) {
  if (g_count == 0) {
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
      std::signal(signal_number, OnSignal);
    }
  }
  if (g_count == kMaxPaths || path.size() >= kMaxPathBytes) return;
  std::memcpy(g_paths[g_count], path.c_str(), path.size() + 1);
  g_count = g_count + 1;
}
}  // namespace cleanup

// A set of equally sized pattern files in a temporary directory, removed by
// the destructor (or by cleanup::OnSignal).
class FileSet {
 public:
  FileSet() = default;
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  ~FileSet() {
    for (const std::string& path : paths_) unlink(path.c_str());
    if (!directory_.empty()) rmdir(directory_.c_str());
  }

  // Creates |count| files of |bytes_each| bytes. Returns "" or what failed.
  std::string Create(uint32_t count, uint64_t bytes_each) {
    bytes_each_ = bytes_each;
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") +
                          "/weft_bench_files.XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (mkdtemp(name.data()) == nullptr) {
      return "mkdtemp('" + pattern + "'): " + ErrnoText(errno);
    }
    directory_ = name.data();
    cleanup::Add(directory_);
    std::vector<uint64_t> block(kWriteBlockBytes / 8);
    for (uint32_t f = 0; f < count; ++f) {
      std::string path = directory_ + "/file" + std::to_string(f) + ".bin";
      cleanup::Add(path);
      int fd =
          open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) return "open('" + path + "'): " + ErrnoText(errno);
      paths_.push_back(path);
      std::string error;
      for (uint64_t offset = 0; error.empty() && offset < bytes_each;
           offset += kWriteBlockBytes) {
        uint64_t length = std::min(kWriteBlockBytes, bytes_each - offset);
        for (uint64_t i = 0; i < length / 8; ++i) {
          block[i] = PatternWord(f, offset + i * 8);
        }
        ssize_t written =
            pwrite(fd, block.data(), length, static_cast<off_t>(offset));
        if (written != static_cast<ssize_t>(length)) {
          error = "pwrite('" + path + "', " + std::to_string(length) +
                  " bytes at " + std::to_string(offset) +
                  "): " + (written < 0 ? ErrnoText(errno) : "short write");
        }
      }
      // Clean pages are what POSIX_FADV_DONTNEED can drop.
      if (error.empty() && fdatasync(fd) != 0) {
        error = "fdatasync('" + path + "'): " + ErrnoText(errno);
      }
      close(fd);
      if (!error.empty()) return error;
    }
    struct statfs info;
    if (statfs(directory_.c_str(), &info) == 0) {
      file_system_ = FileSystemName(static_cast<uint64_t>(info.f_type));
    }
    return "";
  }

  uint32_t count() const { return static_cast<uint32_t>(paths_.size()); }
  uint64_t bytes_each() const { return bytes_each_; }
  uint64_t total_bytes() const { return bytes_each_ * count(); }
  const std::string& path(uint32_t index) const { return paths_[index]; }
  const std::string& file_system() const { return file_system_; }

 private:
  std::string directory_;
  std::vector<std::string> paths_;
  uint64_t bytes_each_ = 0;
  std::string file_system_ = "unknown file system";
};

// The process's files for a family, created on first use. Skips |state| and
// returns NULL when they cannot be created.
const FileSet* GetFiles(benchmark::State& state, bool parameter_set) {
  static std::unique_ptr<FileSet> file_read;
  static std::unique_ptr<FileSet> parameters;
  static std::string file_read_error;
  static std::string parameters_error;
  std::unique_ptr<FileSet>& files = parameter_set ? parameters : file_read;
  std::string& error = parameter_set ? parameters_error : file_read_error;
  if (!files && error.empty()) {
    uint64_t bytes = FileReadBytes();
    if (bytes == 0) {
      error = "WEFT_BENCH_FILE_MB must be a positive number of MiB, not '" +
              std::string(std::getenv("WEFT_BENCH_FILE_MB")) + "'";
    } else {
      auto created = std::make_unique<FileSet>();
      error = parameter_set ? created->Create(kParameterFileCount,
                                              bytes / kParameterFileCount)
                            : created->Create(1, bytes);
      // Failed sets are destroyed here, removing what was written.
      if (error.empty()) files = std::move(created);
    }
  }
  if (!files) {
    std::string message = "creating the benchmark files: " + error;
    state.SkipWithError(message.c_str());
  }
  return files.get();
}

// Drops the page-cache pages of every file of a set before each cold
// iteration and checks with mincore that they are gone.
class Evictor {
 public:
  Evictor() = default;
  Evictor(const Evictor&) = delete;
  Evictor& operator=(const Evictor&) = delete;
  ~Evictor() {
    for (int fd : fds_) close(fd);
  }

  bool Open(benchmark::State& state, const FileSet& files) {
    files_ = &files;
    for (uint32_t f = 0; f < files.count(); ++f) {
      int fd = open(files.path(f).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        std::string message =
            "open('" + files.path(f) + "'): " + ErrnoText(errno);
        state.SkipWithError(message.c_str());
        return false;
      }
      fds_.push_back(fd);
    }
    residency_.resize((files.bytes_each() + kPageBytes - 1) / kPageBytes);
    return true;
  }

  // Evicts every file. Skips |state| when the pages stay (more than half of
  // a file resident after several tries) or a call fails.
  bool Evict(benchmark::State& state) {
    for (uint32_t f = 0; f < fds_.size(); ++f) {
      uint64_t resident = 0;
      for (int attempt = 0; attempt < 4; ++attempt) {
        int error = posix_fadvise(fds_[f], 0, 0, POSIX_FADV_DONTNEED);
        if (error != 0) {
          std::string message =
              "page cache eviction unavailable: posix_fadvise('" +
              files_->path(f) + "', DONTNEED): " + ErrnoText(error);
          state.SkipWithError(message.c_str());
          return false;
        }
        if (!CountResident(state, f, &resident)) return false;
        if (resident == 0) break;
      }
      if (resident != 0) {
        all_evicted_ = false;
        if (resident * 2 > residency_.size()) {
          std::string message =
              "page cache eviction unavailable: posix_fadvise(DONTNEED) left " +
              std::to_string(resident) + " of " +
              std::to_string(residency_.size()) + " pages of '" +
              files_->path(f) + "' resident (" + files_->file_system() + ")";
          state.SkipWithError(message.c_str());
          return false;
        }
      }
    }
    return true;
  }

  // True when every eviction so far left no page resident.
  bool all_evicted() const { return all_evicted_; }

 private:
  bool CountResident(benchmark::State& state, uint32_t f,
                     uint64_t* out_resident) {
    uint64_t length = files_->bytes_each();
    void* mapping = mmap(nullptr, length, PROT_READ, MAP_SHARED, fds_[f], 0);
    if (mapping == MAP_FAILED) {
      std::string message =
          "mmap('" + files_->path(f) + "') for mincore: " + ErrnoText(errno);
      state.SkipWithError(message.c_str());
      return false;
    }
    int result = mincore(mapping, length, residency_.data());
    int error = errno;
    munmap(mapping, length);
    if (result != 0) {
      std::string message =
          "mincore('" + files_->path(f) + "'): " + ErrnoText(error);
      state.SkipWithError(message.c_str());
      return false;
    }
    uint64_t resident = 0;
    for (unsigned char page : residency_) resident += page & 1;
    *out_resident = resident;
    return true;
  }

  const FileSet* files_ = nullptr;
  std::vector<int> fds_;
  std::vector<unsigned char> residency_;
  bool all_evicted_ = true;
};

// One implementation: reads every file of a set into its own destination.
class Reader {
 public:
  virtual ~Reader() = default;
  // Opens the files and allocates (and touches) the destinations.
  virtual bool Setup(benchmark::State& state, const FileSet& files) = 0;
  // Reads every file once, completely.
  virtual bool Read(benchmark::State& state) = 0;
  // Checks what the last Read left in the destinations.
  virtual bool Verify(benchmark::State& state) = 0;
};

// The files as descriptors and malloc'd host destinations.
class HostReader : public Reader {
 public:
  ~HostReader() override {
    for (int fd : fds_) close(fd);
    for (uint8_t* data : data_) std::free(data);
  }

  bool Setup(benchmark::State& state, const FileSet& files) override {
    files_ = &files;
    for (uint32_t f = 0; f < files.count(); ++f) {
      int fd = open(files.path(f).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        std::string message =
            "open('" + files.path(f) + "'): " + ErrnoText(errno);
        state.SkipWithError(message.c_str());
        return false;
      }
      fds_.push_back(fd);
      uint8_t* data = static_cast<uint8_t*>(std::malloc(files.bytes_each()));
      if (data == nullptr) {
        state.SkipWithError("malloc of a destination failed");
        return false;
      }
      // Touched now, so no row times the first faults of its destination
      // (not with zeros: the compiler may turn malloc + memset(0) into a
      // calloc, which touches nothing).
      std::memset(data, 0xA5, files.bytes_each());
      data_.push_back(data);
    }
    return true;
  }

  bool Verify(benchmark::State& state) override {
    for (uint32_t f = 0; f < files_->count(); ++f) {
      if (!CheckPattern(state, "host destination", f, data_[f],
                        files_->bytes_each())) {
        return false;
      }
    }
    return true;
  }

 protected:
  const FileSet* files_ = nullptr;
  std::vector<int> fds_;
  std::vector<uint8_t*> data_;
};

// pread on the calling thread, one file after another, each in as few calls
// as the kernel allows (it caps one call at 0x7ffff000 bytes).
class PreadReader : public HostReader {
 public:
  bool Read(benchmark::State& state) override {
    for (uint32_t f = 0; f < fds_.size(); ++f) {
      uint64_t length = files_->bytes_each();
      uint64_t done = 0;
      while (done < length) {
        ssize_t n = pread(fds_[f], data_[f] + done, length - done,
                          static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          std::string message =
              "pread('" + files_->path(f) + "') at byte " +
              std::to_string(done) + ": " +
              (n < 0 ? ErrnoText(errno) : "unexpected end of file");
          state.SkipWithError(message.c_str());
          return false;
        }
        done += static_cast<uint64_t>(n);
      }
    }
    return true;
  }
};

// mmap of each file, memcpy into the destination, munmap.
class MmapReader : public HostReader {
 public:
  bool Read(benchmark::State& state) override {
    for (uint32_t f = 0; f < fds_.size(); ++f) {
      uint64_t length = files_->bytes_each();
      void* mapping = mmap(nullptr, length, PROT_READ, MAP_SHARED, fds_[f], 0);
      if (mapping == MAP_FAILED) {
        std::string message =
            "mmap('" + files_->path(f) + "'): " + ErrnoText(errno);
        state.SkipWithError(message.c_str());
        return false;
      }
      std::memcpy(data_[f], mapping, length);
      munmap(mapping, length);
    }
    return true;
  }
};

// A weft device, the files opened with weft_file_open and one device buffer
// per file.
class WeftReader : public Reader {
 public:
  explicit WeftReader(const char* device_string)
      : device_string_(device_string) {}
  ~WeftReader() override {
    for (weft_semaphore_t* semaphore : semaphores_) {
      weft_semaphore_release(semaphore);
    }
    for (weft_buffer_t* buffer : buffers_) weft_buffer_release(buffer);
    for (weft_file_t* file : weft_files_) weft_file_release(file);
    weft_device_release(device_);
  }

  bool Setup(benchmark::State& state, const FileSet& files) override {
    files_ = &files;
    weft_allocator_t allocator = weft_allocator_system();
    weft_status_t status =
        weft_device_create(device_string_, allocator, &device_);
    if (!weft_status_is_ok(status)) {
      // The io_uring rows on a kernel or build without it: expected, and
      // tolerated by bench/smoke.cmake.
      bool io_uring = std::strstr(device_string_, "io_uring") != nullptr &&
                      weft_status_code(status) == WEFT_STATUS_UNAVAILABLE;
      std::string message =
          (io_uring ? std::string("io_uring unavailable: ")
                    : std::string(device_string_) + " unavailable: ") +
          ConsumeStatus(status);
      state.SkipWithError(message.c_str());
      return false;
    }
    for (uint32_t f = 0; f < files.count(); ++f) {
      weft_file_t* file = nullptr;
      if (!Ok(state,
              weft_file_open(files.path(f).c_str(), WEFT_FILE_ACCESS_READ,
                             WEFT_FILE_OPEN_FLAG_NONE, allocator, &file),
              "file_open")) {
        return false;
      }
      weft_files_.push_back(file);
      weft_buffer_params_t params = {};
      weft_buffer_t* buffer = nullptr;
      if (!Ok(state,
              weft_device_allocate_buffer(device_, params, files.bytes_each(),
                                          &buffer),
              "allocate_buffer")) {
        return false;
      }
      buffers_.push_back(buffer);
      // Touched now, so no row times the first faults of its destination.
      const uint32_t zero = 0;
      if (!Ok(state,
              weft_buffer_map_fill(buffer, 0, files.bytes_each(), &zero,
                                   sizeof(zero)),
              "map_fill")) {
        return false;
      }
    }
    return SetupReads(state);
  }

  bool Verify(benchmark::State& state) override {
    for (uint32_t f = 0; f < files_->count(); ++f) {
      weft_buffer_mapping_t mapping = {};
      if (!Ok(state,
              weft_buffer_map_range(buffers_[f], WEFT_MAPPING_MODE_SCOPED,
                                    WEFT_MEMORY_ACCESS_READ, 0,
                                    files_->bytes_each(), &mapping),
              "map_range")) {
        return false;
      }
      bool ok = CheckPattern(state, "device buffer", f, mapping.contents,
                             files_->bytes_each());
      weft_buffer_unmap_range(&mapping);
      if (!ok) return false;
    }
    return true;
  }

 protected:
  // Per-mode setup after the device, files and buffers exist.
  virtual bool SetupReads(benchmark::State& state) { return true; }

  weft_semaphore_t* NewSemaphore(benchmark::State& state) {
    weft_semaphore_t* semaphore = nullptr;
    if (!Ok(state, weft_device_create_semaphore(device_, 0, &semaphore),
            "create_semaphore")) {
      return nullptr;
    }
    semaphores_.push_back(semaphore);
    return semaphore;
  }

  const char* device_string_;
  const FileSet* files_ = nullptr;
  weft_device_t* device_ = nullptr;
  std::vector<weft_file_t*> weft_files_;
  std::vector<weft_buffer_t*> buffers_;
  std::vector<weft_semaphore_t*> semaphores_;
};

// weft_device_queue_read: every file in reads of at most |chunk_bytes|
// (UINT64_MAX: one read per file), all submitted at once, each signalling
// its own semaphore; the host waits for all of them.
class WeftQueueReader : public WeftReader {
 public:
  WeftQueueReader(const char* device_string, uint64_t chunk_bytes)
      : WeftReader(device_string), chunk_bytes_(chunk_bytes) {}

  bool Read(benchmark::State& state) override {
    ++value_;
    for (uint64_t& value : values_) value = value_;
    for (size_t i = 0; i < reads_.size(); ++i) {
      const ReadRange& read = reads_[i];
      if (!Ok(state,
              weft_device_queue_read(
                  device_, WEFT_QUEUE_AFFINITY_ANY, weft_semaphore_list_empty(),
                  List1(&semaphores_[i], &values_[i]), weft_files_[read.file],
                  read.offset, buffers_[read.file], read.offset, read.length),
              "queue_read")) {
        return false;
      }
    }
    weft_semaphore_list_t all = {static_cast<uint32_t>(semaphores_.size()),
                                 semaphores_.data(), values_.data()};
    return Ok(state,
              weft_semaphore_list_wait(WEFT_WAIT_MODE_ALL, all,
                                       weft_timeout_relative(kWaitTimeoutNs)),
              "semaphore_list_wait");
  }

 protected:
  bool SetupReads(benchmark::State& state) override {
    for (uint32_t f = 0; f < files_->count(); ++f) {
      uint64_t length = files_->bytes_each();
      for (uint64_t offset = 0; offset < length; offset += chunk_bytes_) {
        reads_.push_back({f, offset, std::min(chunk_bytes_, length - offset)});
        if (!NewSemaphore(state)) return false;
        if (chunk_bytes_ > length - offset) break;
      }
    }
    values_.resize(reads_.size());
    return true;
  }

 private:
  struct ReadRange {
    uint32_t file;
    uint64_t offset;
    uint64_t length;
  };
  uint64_t chunk_bytes_;
  std::vector<ReadRange> reads_;
  std::vector<uint64_t> values_;
  uint64_t value_ = 0;
};

// weft_parameter_stream_load: one span per file. |chunk_bytes| and
// |reads_in_flight| of 0 keep the stream's defaults.
class WeftStreamReader : public WeftReader {
 public:
  WeftStreamReader(const char* device_string, uint64_t chunk_bytes,
                   uint32_t reads_in_flight, bool direct_io)
      : WeftReader(device_string),
        chunk_bytes_(chunk_bytes),
        reads_in_flight_(reads_in_flight),
        direct_io_(direct_io) {}

  bool Read(benchmark::State& state) override {
    return Ok(state,
              weft_parameter_stream_load(device_, spans_.data(),
                                         static_cast<uint32_t>(spans_.size()),
                                         &options_, weft_allocator_system()),
              "parameter_stream_load");
  }

 protected:
  bool SetupReads(benchmark::State& state) override {
    for (uint32_t f = 0; f < files_->count(); ++f) {
      spans_.push_back(
          {weft_files_[f], 0, buffers_[f], 0, files_->bytes_each()});
    }
    weft_parameter_stream_options_initialize(&options_);
    if (chunk_bytes_ != 0) options_.chunk_size = chunk_bytes_;
    if (reads_in_flight_ != 0) options_.max_reads_in_flight = reads_in_flight_;
    options_.direct_io = direct_io_;
    return true;
  }

 private:
  uint64_t chunk_bytes_;
  uint32_t reads_in_flight_;
  bool direct_io_;
  std::vector<weft_parameter_span_t> spans_;
  weft_parameter_stream_options_t options_;
};

// What one registered row runs.
struct Row {
  const char* family;  // "FileRead" or "ParameterStream"
  const char* impl;
  // Creates the implementation.
  std::unique_ptr<Reader> (*make)();
};

void RunRow(benchmark::State& state, const Row* row, Cache cache) {
  bool parameter_set = std::strcmp(row->family, "ParameterStream") == 0;
  const FileSet* files = GetFiles(state, parameter_set);
  if (files == nullptr) return;
  std::unique_ptr<Reader> reader = row->make();
  if (!reader->Setup(state, *files)) return;
  // Warm: fills the page cache; both: the implementation's first run (ring
  // set-up, first faults) stays out of the timing.
  if (!reader->Read(state)) return;
  Evictor evictor;
  if (cache == Cache::kCold && !evictor.Open(state, *files)) return;
  for (auto _ : state) {
    if (cache == Cache::kCold) {
      state.PauseTiming();
      // ResumeTiming must not follow SkipWithError (a checked failure).
      if (!evictor.Evict(state)) break;
      state.ResumeTiming();
    }
    if (!reader->Read(state)) break;
  }
  if (state.error_occurred() || !reader->Verify(state)) return;
  const double bytes = static_cast<double>(files->total_bytes());
  state.counters["GBps"] = benchmark::Counter(
      bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = bytes;
  if (cache == Cache::kCold) state.counters["cold_ok"] = evictor.all_evicted();
}

template <typename T, typename... Args>
std::unique_ptr<Reader> Make(Args... args) {
  return std::unique_ptr<Reader>(new T(args...));
}

constexpr const char* kIoUring = "local-task?file_io=io_uring";
constexpr const char* kThreads = "local-task?file_io=threads";

// The FileRead and ParameterStream rows in table order. The main weft rows
// ("weft-io_uring", "weft-threads") read the file as 4 MiB queue reads all
// in flight at once, the approach that measured fastest for both backends
// here (docs/PERFORMANCE.md, "File I/O"): the chunks are copied on every
// CPU at once (io-wq workers, or the thread pool). The "-1read" rows (one
// queue read of the whole file) and "-stream" (the parameter stream) are
// the other approaches, kept to compare.
const Row kRows[] = {
    {"FileRead", "weft-io_uring",
     [] { return Make<WeftQueueReader>(kIoUring, kChunkBytes); }},
    {"FileRead", "weft-threads",
     [] { return Make<WeftQueueReader>(kThreads, kChunkBytes); }},
    {"FileRead", "pread", [] { return Make<PreadReader>(); }},
    {"FileRead", "mmap", [] { return Make<MmapReader>(); }},
    {"FileRead", "weft-io_uring-1read",
     [] { return Make<WeftQueueReader>(kIoUring, UINT64_MAX); }},
    {"FileRead", "weft-io_uring-stream",
     [] { return Make<WeftStreamReader>(kIoUring, kChunkBytes, 64u, false); }},
    {"FileRead", "weft-threads-1read",
     [] { return Make<WeftQueueReader>(kThreads, UINT64_MAX); }},
    {"ParameterStream", "weft-stream",
     [] { return Make<WeftStreamReader>("local-task", 0, 0u, false); }},
    {"ParameterStream", "pread-sequential", [] { return Make<PreadReader>(); }},
};

}  // namespace

void RegisterFileBenchmarks() {
  for (const Row& row : kRows) {
    for (Cache cache : {Cache::kWarm, Cache::kCold}) {
      std::string name =
          std::string(row.family) + "/" + row.impl + "/" + CacheName(cache);
      benchmark::RegisterBenchmark(name.c_str(), RunRow, &row, cache)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace weft_bench
