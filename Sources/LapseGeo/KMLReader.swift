// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Reads the `LineString` geometries of a KML file (streamed), joined in document order. Each `coordinates`
/// element holds whitespace-separated `longitude,latitude[,altitude]` tuples. The first `Placemark` name is
/// the route's name. Errors have no subject (``RouteFile`` adds the path).
enum KMLReader {
    static func read(path: String) throws -> Route {
        guard let stream = InputStream(fileAtPath: path) else { throw LapseError(.invalidInput, path, "cannot open") }
        let parser = XMLParser(stream: stream)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let delegate = KMLParserDelegate()
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error { throw error }
        guard ok else {
            throw LapseError(.invalidInput, nil, XMLErrors.describe(parser, sawRoot: delegate.sawRoot, root: "kml"))
        }
        guard delegate.sawRoot else { throw LapseError(.invalidInput, nil, "not a KML file (no <kml> element)") }
        guard delegate.closedRoot else { throw LapseError(.invalidInput, nil, XMLErrors.truncated(parser)) }
        guard !delegate.points.isEmpty else { throw LapseError(.invalidInput, nil, "no LineString coordinates") }
        return Route(points: delegate.points, name: delegate.name)
    }

    /// Parses `lon,lat[,alt] lon,lat[,alt] …`.
    static func parseTuples(_ text: String, line: Int) throws -> [TrackPoint] {
        var result: [TrackPoint] = []
        for (k, tuple) in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
            .enumerated()
        {
            let parts = tuple.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3, let lon = NumberText.decimal(parts[0]),
                let lat = NumberText.decimal(parts[1])
            else {
                throw LapseError(
                    .invalidInput, nil, "coordinate \(k + 1) near line \(line) is '\(tuple)', not lon,lat[,alt]")
            }
            let coordinate: Coordinate
            do { coordinate = try Coordinate(latitude: lat, longitude: lon) } catch let e as LapseError {
                throw LapseError(.invalidInput, nil, "coordinate \(k + 1) near line \(line): \(e.reason)")
            }
            let alt = parts.count == 3 ? NumberText.decimal(parts[2]) : nil
            result.append(TrackPoint(coordinate, elevation: alt))
        }
        return result
    }
}

final class KMLParserDelegate: NSObject, XMLParserDelegate {
    var points: [TrackPoint] = []
    var name: String?
    var sawRoot = false
    var closedRoot = false
    var error: LapseError?
    private var stack: [String] = []
    private var text = ""
    private var collecting: String?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes: [String: String] = [:]
    ) {
        if stack.isEmpty {
            sawRoot = elementName == "kml"
            if !sawRoot {
                error = LapseError(.invalidInput, nil, "not a KML file (root element is <\(elementName)>)")
                parser.abortParsing()
            }
        }
        if elementName == "coordinates" && stack.last == "LineString" {
            collecting = "coordinates"
            text = ""
        }
        if elementName == "name" && stack.last == "Placemark" && name == nil {
            collecting = "name"
            text = ""
        }
        stack.append(elementName)
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        stack.removeLast()
        if stack.isEmpty { closedRoot = true }
        guard let what = collecting, what == elementName else { return }
        collecting = nil
        if what == "name" {
            name = String(text.trimmedASCII)
            return
        }
        do { points += try KMLReader.parseTuples(text, line: parser.lineNumber) } catch let e as LapseError {
            error = e
            parser.abortParsing()
        } catch {}
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if collecting != nil { text += string }
    }
}
