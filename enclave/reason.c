#include "enclave/reason.h"

const char *rlvr_reason_name(int reason) {
    switch ((rlvr_reason)reason) {
    case RLVR_REASON_NONE: return "none";
    case RLVR_REASON_PATCH_PARSE: return "patch_parse";
    case RLVR_REASON_PATCH_TOO_LARGE: return "patch_too_large";
    case RLVR_REASON_TOO_MANY_FILES: return "too_many_files";
    case RLVR_REASON_BINARY: return "binary";
    case RLVR_REASON_SYMLINK: return "symlink";
    case RLVR_REASON_SUBMODULE: return "submodule";
    case RLVR_REASON_MODE_CHANGE: return "mode_change";
    case RLVR_REASON_PATH_OUTSIDE: return "path_outside";
    case RLVR_REASON_GIT_PATH: return "git_path";
    case RLVR_REASON_ENV_FILE: return "env_file";
    case RLVR_REASON_HOOK_FILE: return "hook_file";
    case RLVR_REASON_PROTECTED_PATH: return "protected_path";
    case RLVR_REASON_NOT_EDITABLE: return "not_editable";
    case RLVR_REASON_PUBLIC_TESTS_CHANGED: return "public_tests_changed";
    case RLVR_REASON_APPLY_FAILED: return "apply_failed";
    case RLVR_REASON_TESTS_FAILED: return "tests_failed";
    case RLVR_REASON_TEST_SKIPPED: return "test_skipped";
    case RLVR_REASON_NO_RESULTS: return "no_results";
    case RLVR_REASON_INCOMPLETE: return "incomplete";
    case RLVR_REASON_RESULTS_INVALID: return "results_invalid";
    case RLVR_REASON_EXIT_STATUS: return "exit_status";
    case RLVR_REASON_BUILD_FAILED: return "build_failed";
    case RLVR_REASON_RESULTS_UNSAFE: return "results_unsafe";
    case RLVR_REASON_RESULTS_TOO_LARGE: return "results_too_large";
    case RLVR_REASON_CONSENSUS_MIXED: return "consensus_mixed";
    case RLVR_REASON_TIMEOUT: return "timeout";
    case RLVR_REASON_CPU_LIMIT: return "cpu_limit";
    case RLVR_REASON_MEMORY_LIMIT: return "memory_limit";
    case RLVR_REASON_PROCESS_LIMIT: return "process_limit";
    case RLVR_REASON_FILE_SIZE_LIMIT: return "file_size_limit";
    case RLVR_REASON_DISK_LIMIT: return "disk_limit";
    case RLVR_REASON_OUTPUT_LIMIT: return "output_limit";
    case RLVR_REASON_SANDBOX_ERROR: return "sandbox_error";
    case RLVR_REASON_APPLY_ERROR: return "apply_error";
    }
    return "unknown";
}
