// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads GPX 1.0 and 1.1 as a stream (`XMLParser(stream:)`, fed in chunks), so memory holds the points found,
/// never the file. Tracks win over routes: all `trkpt` of all `trkseg` of all `trk` in document order, joined;
/// when there are none, all `rtept` of all `rte`. Waypoints (`wpt`) are not part of the path.
/// Elements inside `extensions` are ignored. Errors have no subject (``RouteFile`` adds the path).
enum GPXReader {
    static func read(path: String) throws -> Route {
        guard let stream = InputStream(fileAtPath: path) else {
            throw LapseError(.invalidInput, path, "cannot open")
        }
        let parser = XMLParser(stream: stream)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let delegate = GPXParserDelegate()
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error { throw error }
        guard ok else {
            throw LapseError(.invalidInput, nil, XMLErrors.describe(parser, sawRoot: delegate.sawRoot, root: "gpx"))
        }
        guard delegate.sawRoot else { throw LapseError(.invalidInput, nil, "not a GPX file (no <gpx> element)") }
        // XMLParser(stream:) on Linux does not report a document that stops before its root element is closed.
        guard delegate.closedRoot else { throw LapseError(.invalidInput, nil, XMLErrors.truncated(parser)) }
        if let error = delegate.deferredError { throw error }
        let points = delegate.trackPoints.isEmpty ? delegate.routePoints : delegate.trackPoints
        guard !points.isEmpty else {
            throw LapseError(.invalidInput, nil, "no route points (no trk/trkseg/trkpt or rte/rtept with lat and lon)")
        }
        var route = Route(points: points, name: delegate.trackName ?? delegate.routeName ?? delegate.metadataName)
        route.notice = delegate.metadataDescription
        route.retrieved = delegate.metadataTime
        route.copyright = delegate.copyright
        return route
    }
}

/// What XMLParser reports, as one line: truncated files are named as such.
enum XMLErrors {
    static func describe(_ parser: XMLParser, sawRoot: Bool, root: String) -> String {
        let line = parser.lineNumber
        let nsError = parser.parserError.map { $0 as NSError }
        // libxml2: 5 = XML_ERR_DOCUMENT_END / premature end, 77 = tag name mismatch / not finished, 4 = empty.
        let code = nsError?.code ?? 0
        let detail = (nsError?.userInfo[NSLocalizedDescriptionKey] as? String)
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        if !sawRoot && code == 4 { return "the file is empty or not XML" }
        if code == 5 || code == 77 || code == 73 || code == 76 { return truncated(parser) }
        return "malformed XML at line \(line)"
            + (detail.map { ": \($0)" } ?? (code != 0 ? " (libxml2 error \(code))" : ""))
    }

    static func truncated(_ parser: XMLParser) -> String {
        "XML ends early (truncated?) at line \(parser.lineNumber)"
    }
}

final class GPXParserDelegate: NSObject, XMLParserDelegate {
    var trackPoints: [TrackPoint] = []
    var routePoints: [TrackPoint] = []
    var trackName: String?
    var routeName: String?
    var metadataName: String?
    /// `metadata/desc`, `metadata/time` and `metadata/copyright/@author`.
    var metadataDescription: String?
    var metadataTime: Date?
    var copyright: String?
    var sawRoot = false
    var closedRoot = false
    /// A problem that aborts parsing.
    var error: LapseError?
    /// A problem reported only if the XML itself turns out well-formed (a truncated file reports truncation).
    var deferredError: LapseError?

    /// Element names from the root down to the current element.
    private var stack: [String] = []
    private var extensionsDepth = 0
    private var current: (coordinate: Coordinate, isTrack: Bool)?
    private var elevation: Double?
    private var time: Date?
    private var text = ""
    private var collectingText = false

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes: [String: String] = [:]
    ) {
        let name = elementName
        defer { stack.append(name) }
        if stack.isEmpty {
            sawRoot = name == "gpx"
            if !sawRoot { fail(parser, "not a GPX file (root element is <\(name)>)") }
            return
        }
        if extensionsDepth > 0 || name == "extensions" {
            extensionsDepth += 1
            return
        }
        switch name {
        case "trkpt", "rtept":
            let isTrack = name == "trkpt"
            guard let latText = attributes["lat"], let lonText = attributes["lon"] else {
                // Not fatal yet: a file cut off inside the tag looks like this too, and truncation is the better
                // message.
                if deferredError == nil {
                    deferredError = LapseError(
                        .invalidInput, nil, "<\(name)> without lat and lon at line \(parser.lineNumber)")
                }
                return
            }
            guard let lat = NumberText.decimal(latText.trimmedASCII),
                let lon = NumberText.decimal(lonText.trimmedASCII)
            else {
                return fail(
                    parser,
                    "<\(name)> has lat=\"\(latText)\" lon=\"\(lonText)\", not numbers, at line \(parser.lineNumber)")
            }
            do { current = (try Coordinate(latitude: lat, longitude: lon), isTrack) } catch let e as LapseError {
                return fail(parser, "\(e.reason) at line \(parser.lineNumber)")
            } catch { return }
            elevation = nil
            time = nil
        case "ele", "time":
            if current != nil && (stack.last == "trkpt" || stack.last == "rtept") || stack.last == "metadata" {
                startText()
            }
        case "name":
            if ["trk", "rte", "metadata"].contains(stack.last ?? "") { startText() }
        case "desc":
            if stack.last == "metadata" { startText() }
        case "copyright":
            if stack.last == "metadata", let author = attributes["author"], !author.isEmpty { copyright = author }
        default:
            break
        }
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        stack.removeLast()
        if stack.isEmpty { closedRoot = true }
        if extensionsDepth > 0 {
            extensionsDepth -= 1
            return
        }
        switch elementName {
        case "trkpt", "rtept":
            guard let c = current else { return }
            let point = TrackPoint(c.coordinate, elevation: elevation, time: time)
            if c.isTrack { trackPoints.append(point) } else { routePoints.append(point) }
            current = nil
        case "ele":
            if collectingText {
                let t = endText()
                guard let v = NumberText.decimal(t) else {
                    return fail(parser, "<ele> is '\(t)', not a number, at line \(parser.lineNumber)")
                }
                elevation = v
            }
        case "time":
            // An unreadable time is dropped, not fatal.
            if collectingText {
                if stack.last == "metadata" {
                    metadataTime = ISO8601.parse(endText())
                } else {
                    time = ISO8601.parse(endText())
                }
            }
        case "desc":
            if collectingText { metadataDescription = endText() }
        case "name":
            if collectingText {
                let t = endText()
                switch stack.last {
                case "trk": if trackName == nil { trackName = t }
                case "rte": if routeName == nil { routeName = t }
                default: if metadataName == nil { metadataName = t }
                }
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if collectingText { text += string } // arrives in pieces
    }

    private func startText() {
        collectingText = true
        text = ""
    }
    private func endText() -> String {
        collectingText = false
        return String(text.trimmedASCII)
    }

    private func fail(_ parser: XMLParser, _ reason: String) {
        if error == nil { error = LapseError(.invalidInput, nil, reason) }
        parser.abortParsing()
    }
}
