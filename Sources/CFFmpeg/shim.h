// What Swift cannot import from FFmpeg's headers (function-like macros), as inline functions and constants.
#ifndef LAPSE_CFFMPEG_SHIM_H
#define LAPSE_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/cpu.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/samplefmt.h>
#include <libavutil/spherical.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

/// AVERROR(e): FFmpeg's negative error code for a POSIX errno value.
static inline int lapse_averror(int e) { return AVERROR(e); }
/// AVERROR(EAGAIN), the "send/receive again" code of the codec API.
static inline int lapse_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF.
static inline int lapse_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR_EXIT (an interrupt callback asked to stop).
static inline int lapse_averror_exit(void) { return AVERROR_EXIT; }
/// AVERROR_INVALIDDATA.
static inline int lapse_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AVERROR_HTTP_NOT_FOUND / FORBIDDEN / UNAUTHORIZED / other 4xx / 5xx.
static inline int lapse_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int lapse_averror_http_forbidden(void) { return AVERROR_HTTP_FORBIDDEN; }
static inline int lapse_averror_http_unauthorized(void) { return AVERROR_HTTP_UNAUTHORIZED; }
static inline int lapse_averror_http_other_4xx(void) { return AVERROR_HTTP_OTHER_4XX; }
static inline int lapse_averror_http_server_error(void) { return AVERROR_HTTP_SERVER_ERROR; }
/// AV_NOPTS_VALUE: "no timestamp".
static const int64_t lapse_nopts_value = AV_NOPTS_VALUE;
/// AV_TIME_BASE (microseconds) as a rational.
static inline AVRational lapse_time_base_q(void) { AVRational r = {1, AV_TIME_BASE}; return r; }

/// av_err2str as a function: writes the message for `errnum` into `buf` (at least AV_ERROR_MAX_STRING_SIZE bytes).
static inline void lapse_av_strerror(int errnum, char *buf, size_t size) { av_strerror(errnum, buf, size); }

/// av_log with a fixed "%s" format, so a message can never be read as a format string.
static inline void lapse_av_log(void *avcl, int level, const char *message) { av_log(avcl, level, "%s", message); }

#endif
