// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Testing

@Suite struct TimeAndRedactionTests {
    @Test func timesParseAndFormat() {
        #expect(TimeValue.parse("12.5") == 12.5)
        #expect(TimeValue.parse("1:02:03.5") == 3723.5)
        #expect(TimeValue.parse("02:03") == 123)
        #expect(TimeValue.parse("0") == 0)
        // 1e300 seconds crashed `lapse clip --start 1e300` where the time was printed (Int overflow): no such
        // time is taken, and none is printed as more than its number.
        for bad in [
            "", "-1", "1:60", "1:2:3:4", "a", "1:-5", "inf", "nan", "1e400", "1:70:00", ":5", "1e300",
            "9999999999999999:00:00", "-0:01", "+1:00", "0x10", "0X1:00"
        ] {
            #expect(TimeValue.parse(bad) == nil, "\(bad)")
        }
        #expect(TimeValue.format(3723.5) == "1:02:03.500")
        #expect(TimeValue.format(65.0004) == "1:05.000")
        #expect(TimeValue.format(0.0125) == "0:00.013")
        #expect(TimeValue.format(-1.5) == "-0:01.500")
        #expect(TimeValue.format(1e300) == "1e+300 s" && TimeValue.format(.infinity) == "inf s")
        #expect(TimeValue.parse("1e12") == 1e12)
        for seconds in [0.0, 0.5, 59.999, 61.25, 3599.5, 36_000.125] {
            #expect(TimeValue.parse(TimeValue.format(seconds)) == (seconds * 1000).rounded() / 1000, "\(seconds)")
        }
    }

    /// A system call's failure keeps its errno as the cause, and says it in words.
    @Test func posixErrorsKeepTheirErrno() {
        let missing = open("/nonexistent-lapse/x", O_RDONLY)
        let error = LapseError.posix(.invalidInput, "/nonexistent-lapse/x", "cannot open")
        #expect(missing == -1)
        #expect(error.cause == .posix(ENOENT))
        #expect(error.description == "/nonexistent-lapse/x: cannot open: No such file or directory")
        #expect(LapseError(.codec, nil, "x").cause == nil)
    }

    @Test func secretsAreHidden() {
        #expect(
            Redaction.url("https://tile.googleapis.com/v1/streetview/tiles/3/0/0?key=AIzaSyXXXX&session=abc")
                == "https://tile.googleapis.com/v1/streetview/tiles/3/0/0?…")
        #expect(Redaction.url("https://user:secret@example.com/v.mp4") == "https://example.com/v.mp4")
        #expect(Redaction.url("https://example.com/v.mp4#t=3") == "https://example.com/v.mp4")
        #expect(Redaction.url("/home/ann/v.mp4") == "/home/ann/v.mp4")
        #expect(
            Redaction.message("bad key AIzaSy123 in AIzaSy123", hiding: ["AIzaSy123"])
                == "bad key [redacted] in [redacted]")
        #expect(Redaction.message("a b c", hiding: ["a"]) == "a b c") // too short to be a secret
    }
}

@Suite struct FrameRateTests {
    /// Integers, fractions and decimals; the NTSC rates exact as N·1000/1001; nonsense refused.
    @Test func parses() {
        #expect(FrameRate.parse("30") == FrameRate(30))
        #expect(FrameRate.parse("30000/1001") == FrameRate(30000, 1001))
        #expect(FrameRate.parse("29.97") == FrameRate(30000, 1001))
        #expect(FrameRate.parse("23.976") == FrameRate(24000, 1001))
        #expect(FrameRate.parse("59.94") == FrameRate(60000, 1001))
        #expect(FrameRate.parse("12.5") == FrameRate(25, 2))
        #expect(FrameRate.parse("50/2") == FrameRate(25))
        #expect(FrameRate.parse("29.9701") == FrameRate(30000, 1001)) // within NTSC's rounding
        #expect(FrameRate.parse("12.3456") == FrameRate(12346, 1000))
        for bad in ["0", "-25", "abc", "30/0", "1/2/3", "inf", "nan", "", "0.0001"] {
            #expect(FrameRate.parse(bad) == nil, "\(bad)")
        }
        #expect(
            FrameRate(30000, 1001).description == "29.97" && FrameRate(25, 2).description == "12.5"
                && FrameRate(30).description == "30")
    }
}
