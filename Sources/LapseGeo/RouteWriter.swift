// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// GPX 1.1 and GeoJSON text for a route, written piece by piece.
///
/// Headings, when the points have them, go where readers look for them: in GPX as Garmin's TrackPointExtension
/// v2 `course` (degrees true, the extension GPS devices and Strava-style tools read), in GeoJSON as a
/// `properties.headings` array beside `coordTimes`.
enum RouteWriter {
    static let trackPointExtension = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"

    static func gpx(_ route: Route, into out: inout ChunkedWriter) throws {
        let headed = route.points.contains { $0.heading != nil }
        let namespace = headed ? " xmlns:gpxtpx=\"\(trackPointExtension)\"" : ""
        try out.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="lapse" xmlns="http://www.topografix.com/GPX/1/1"\(namespace)>

            """)
        if route.retrieved != nil || route.notice != nil || route.copyright != nil {
            try out.write("  <metadata>\n")
            if let notice = route.notice { try out.write("    <desc>\(xmlEscape(notice))</desc>\n") }
            if let copyright = route.copyright {
                try out.write("    <copyright author=\"\(xmlEscape(copyright))\"/>\n")
            }
            if let retrieved = route.retrieved { try out.write("    <time>\(ISO8601.format(retrieved))</time>\n") }
            try out.write("  </metadata>\n")
        }
        try out.write("  <trk>\n")
        if let name = route.name { try out.write("    <name>\(xmlEscape(name))</name>\n") }
        try out.write("    <trkseg>\n")
        for p in route.points {
            var line =
                "      <trkpt lat=\"\(fixed(p.coordinate.latitude, 7))\" lon=\"\(fixed(p.coordinate.longitude, 7))\""
            if p.elevation == nil && p.time == nil && p.heading == nil {
                line += "/>\n"
            } else {
                line += ">"
                if let e = p.elevation { line += "<ele>\(fixed(e, 2))</ele>" }
                if let t = p.time { line += "<time>\(ISO8601.format(t))</time>" }
                if let h = p.heading {
                    line +=
                        "<extensions><gpxtpx:TrackPointExtension><gpxtpx:course>\(fixed(h, 2))</gpxtpx:course>"
                        + "</gpxtpx:TrackPointExtension></extensions>"
                }
                line += "</trkpt>\n"
            }
            try out.write(line)
        }
        try out.write("    </trkseg>\n  </trk>\n</gpx>\n")
    }

    static func geojson(_ route: Route, into out: inout ChunkedWriter) throws {
        try out.write("{\"type\":\"Feature\",\"properties\":{")
        var properties: [String] = []
        if let name = route.name { properties.append("\"name\":\(jsonString(name))") }
        if let retrieved = route.retrieved {
            properties.append("\"retrieved\":\(jsonString(ISO8601.format(retrieved)))")
        }
        if let notice = route.notice { properties.append("\"notice\":\(jsonString(notice))") }
        if let copyright = route.copyright { properties.append("\"copyright\":\(jsonString(copyright))") }
        let allTimed = !route.points.isEmpty && route.points.allSatisfy { $0.time != nil }
        try out.write(properties.joined(separator: ","))
        if allTimed {
            try out.write((properties.isEmpty ? "" : ",") + "\"coordTimes\":[")
            for (i, p) in route.points.enumerated() {
                try out.write((i == 0 ? "" : ",") + "\"\(ISO8601.format(p.time!))\"")
            }
            try out.write("]")
        }
        if !route.points.isEmpty, route.points.allSatisfy({ $0.heading != nil }) {
            try out.write((properties.isEmpty && !allTimed ? "" : ",") + "\"headings\":[")
            for (i, p) in route.points.enumerated() {
                try out.write((i == 0 ? "" : ",") + fixed(p.heading!, 2))
            }
            try out.write("]")
        }
        try out.write("},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[\n")
        for (i, p) in route.points.enumerated() {
            var s = (i == 0 ? "" : ",\n") + "[\(fixed(p.coordinate.longitude, 7)),\(fixed(p.coordinate.latitude, 7))"
            if let e = p.elevation { s += ",\(fixed(e, 2))" }
            try out.write(s + "]")
        }
        try out.write("\n]}}\n")
    }

    /// `value` with at most `digits` decimals, trailing zeros removed (no exponent notation, as XML and JSON readers
    /// expect).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(format: "%.\(digits)f", value) }
        let n = Int(scaled)
        let divisor = Int(scale)
        var s = (value < 0 && n != 0 ? "-" : "") + String(n / divisor)
        var fraction = n % divisor
        if fraction != 0 {
            var width = digits
            while fraction % 10 == 0 {
                fraction /= 10
                width -= 1
            }
            let f = String(fraction)
            s += "." + String(repeating: "0", count: width - f.count) + f
        }
        return s
    }

    static func xmlEscape(_ s: String) -> String {
        var r = ""
        for c in s {
            switch c {
            case "&": r += "&amp;"
            case "<": r += "&lt;"
            case ">": r += "&gt;"
            case "\"": r += "&quot;"
            default: r.append(c)
            }
        }
        return r
    }

    static func jsonString(_ s: String) -> String {
        var r = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": r += "\\\""
            case "\\": r += "\\\\"
            case "\n": r += "\\n"
            case "\r": r += "\\r"
            case "\t": r += "\\t"
            case _ where u.value < 0x20: r += String(format: "\\u%04x", u.value)
            default: r.unicodeScalars.append(u)
            }
        }
        return r + "\""
    }
}
