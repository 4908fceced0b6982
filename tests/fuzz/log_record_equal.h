// Field-by-field equality of two LogRecords, for the parser fuzz targets' check that a record
// reused from an earlier line parses exactly like a fresh one.
#ifndef LOGFOLD_TESTS_FUZZ_LOG_RECORD_EQUAL_H_
#define LOGFOLD_TESTS_FUZZ_LOG_RECORD_EQUAL_H_

#include "pipeline/log_record.h"

namespace logfold {

inline bool LogRecordsEqual(const LogRecord& a, const LogRecord& b) {
  return a.raw == b.raw && a.flavor == b.flavor && a.outcome == b.outcome &&
         a.facility == b.facility && a.severity == b.severity &&
         a.has_timestamp == b.has_timestamp && a.timestamp_us == b.timestamp_us &&
         a.arrival_us == b.arrival_us && a.hostname == b.hostname && a.app_name == b.app_name &&
         a.tag == b.tag && a.procid == b.procid && a.msgid == b.msgid &&
         a.structured_data == b.structured_data && a.message == b.message &&
         a.json_fields == b.json_fields;
}

}  // namespace logfold

#endif  // LOGFOLD_TESTS_FUZZ_LOG_RECORD_EQUAL_H_
