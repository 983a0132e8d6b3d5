import { expect } from "chai";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { StandardResponseTransformer } from "../../entity/client/response-transformer.js";
import { EntityServerError } from "../../entity/server/errors.js";
import { renderJson, renderJsonError } from "../../entity/server/render-json.js";
import { renderXmlCollection, renderXmlEntity, renderXmlError } from "../../entity/server/render-xml.js";

const transformer = new StandardResponseTransformer();
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  trimValues: false,
});

const awkward = {
  id: 7,
  big: 9007199254740993n,
  ratio: 0.25,
  notANumber: Number.NaN,
  flag: false,
  zero: 0,
  empty: "",
  nothing: null,
  when: new Date("2026-03-04T05:06:07.089Z"),
  bytes: new Uint8Array([0, 1, 254, 255]),
  markup: `<a href="x">&amp; ' "quoted"</a>`,
  crlf: "line1\r\nline2\n",
  spaces: "  padded  ",
  control: "bell\u0007 and nul\u0000",
  emoji: "snow ☃ and 😀",
  address2: "digits kept in names",
  tags: ["one"],
  noTags: [],
  nested: { "not a name": 1, ok: [true, null, { deep: "x" }], "": "empty key" },
};

describe("entity rendering", () => {
  it("renders one entity as well-formed XML with the alias as root and one child per field", () => {
    const xml = renderXmlEntity("user", { id: 1, username: "jwage" });
    expect(XMLValidator.validate(xml)).to.equal(true);
    expect(xml).to.equal(
      '<?xml version="1.0" encoding="UTF-8"?><user><id type="integer">1</id><username>jwage</username></user>',
    );
    const doc = parser.parse(xml);
    expect(doc.user.username).to.equal("jwage");
  });

  it("keeps falsy values, digits in tag names and one-element lists (weak points of the original)", () => {
    const xml = renderXmlEntity("thing", awkward);
    expect(XMLValidator.validate(xml)).to.equal(true);
    const doc = parser.parse(xml).thing;
    expect(doc.zero["#text"]).to.equal("0");
    expect(doc.flag["#text"]).to.equal("false");
    expect(doc.empty).to.equal("");
    expect(doc.nothing["@nil"]).to.equal("true");
    expect(doc.address2).to.equal("digits kept in names");
    expect(doc.tags["@type"]).to.equal("array");
    expect(doc.noTags["@type"]).to.equal("array");
  });

  it("round-trips every value kind through XML and the client transformer", () => {
    const out = transformer.transform(renderXmlEntity("thing", awkward), "xml");
    expect(out.kind).to.equal("entity");
    const data = (out as { data: Record<string, unknown> }).data;
    expect(data.id).to.equal(7);
    expect(data.big).to.equal(9007199254740993n);
    expect(data.ratio).to.equal(0.25);
    expect(Number.isNaN(data.notANumber)).to.equal(true);
    expect(data.flag).to.equal(false);
    expect(data.zero).to.equal(0);
    expect(data.empty).to.equal("");
    expect(data.nothing).to.equal(null);
    expect((data.when as Date).toISOString()).to.equal("2026-03-04T05:06:07.089Z");
    expect([...(data.bytes as Uint8Array)]).to.deep.equal([0, 1, 254, 255]);
    expect(data.markup).to.equal(awkward.markup);
    expect(data.crlf).to.equal(awkward.crlf);
    expect(data.spaces).to.equal(awkward.spaces);
    expect(data.control).to.equal(awkward.control);
    expect(data.emoji).to.equal(awkward.emoji);
    expect(data.tags).to.deep.equal(["one"]);
    expect(data.noTags).to.deep.equal([]);
    expect(data.nested).to.deep.equal(awkward.nested);
  });

  it("round-trips through JSON, with 64-bit integers, bytes and dates as strings", () => {
    const json = JSON.parse(renderJson(awkward));
    expect(json.big).to.equal("9007199254740993");
    expect(json.bytes).to.equal("AAH+/w==");
    expect(json.when).to.equal("2026-03-04T05:06:07.089Z");
    expect(json.notANumber).to.equal("NaN");
    expect(json.nothing).to.equal(null);
    expect(json.control).to.equal(awkward.control);
    expect(json.nested).to.deep.equal(awkward.nested);
  });

  it("writes JSON text exactly: every value kind, odd keys, dates out of the four-digit years", () => {
    const value = {
      text: 'quo"te \\ \n \u0000 \ud800 ☃ 😀',
      empty: "",
      zero: 0,
      negZero: -0,
      big: 2n ** 70n,
      float: 1e21,
      small: 1e-7,
      nan: Number.NaN,
      inf: Number.NEGATIVE_INFINITY,
      yes: true,
      nothing: null,
      missing: undefined,
      dates: [
        new Date(Date.UTC(2026, 10, 27, 5, 30, 14, 5)),
        new Date(-62198755200000),
        new Date(Date.UTC(10000, 0, 1)),
        new Date(Number.NaN),
        new Date(Date.UTC(1000, 0, 1)),
      ],
      // biome-ignore lint/suspicious/noSparseArray: a hole renders as null
      list: [1, undefined, , "x", [], {}],
      bytes: new Uint8Array([0, 1, 254, 255]),
      decimal: { toFixed: () => "12.50", isNaN: () => false },
      // JSON.parse makes "__proto__" an own key; it has never been rendered
      json: JSON.parse('{"__proto__":{"a":1},"2":"two","1":"one","k":{"deep":[null]}}'),
      nullProto: Object.assign(Object.create(null), { b: 1, a: "x" }),
      other: new Map(),
    };
    expect(renderJson(value)).to.equal(
      '{"text":"quo\\"te \\\\ \\n \\u0000 \\ud800 ☃ 😀","empty":"","zero":0,"negZero":0,' +
        '"big":"1180591620717411303424","float":1e+21,"small":1e-7,"nan":"NaN","inf":"-Infinity","yes":true,' +
        '"nothing":null,"dates":["2026-11-27T05:30:14.005Z","-000001-01-01T00:00:00.000Z",' +
        '"+010000-01-01T00:00:00.000Z",null,"1000-01-01T00:00:00.000Z"],"list":[1,null,null,"x",[],{}],' +
        '"bytes":"AAH+/w==","decimal":"12.50","json":{"1":"one","2":"two","k":{"deep":[null]}},' +
        '"nullProto":{"b":1,"a":"x"},"other":"[object Map]"}',
    );
    expect(renderJson([value, awkward])).to.equal(`[${renderJson(value)},${renderJson(awkward)}]`);
    expect(renderJson(undefined)).to.equal("null");
  });

  it("marks a collection so that a one-element list is still a list", () => {
    const xml = renderXmlCollection("user", [{ id: 1, user: "a field named like the alias" }]);
    expect(XMLValidator.validate(xml)).to.equal(true);
    const out = transformer.transform(xml, "xml");
    expect(out).to.deep.equal({
      kind: "collection",
      items: [{ id: 1, user: "a field named like the alias" }],
    });
    expect(transformer.transform(renderXmlCollection("user", []), "xml")).to.deep.equal({
      kind: "collection",
      items: [],
    });
    expect(transformer.transform(renderJson([{ id: 1 }]), "json")).to.deep.equal({
      kind: "collection",
      items: [{ id: 1 }],
    });
  });

  it("renders errors with code, status and message in both formats", () => {
    const err = new EntityServerError("VALIDATION", 'bad <value> & "quote"', "name");
    const xml = renderXmlError(err);
    expect(XMLValidator.validate(xml)).to.equal(true);
    expect(parser.parse(xml).error.message).to.equal('bad <value> & "quote"');
    expect(transformer.transform(xml, "xml")).to.deep.equal({
      kind: "error",
      code: "VALIDATION",
      message: 'bad <value> & "quote"',
      field: "name",
    });
    expect(JSON.parse(renderJsonError(err))).to.deep.equal({
      error: { code: "VALIDATION", status: 400, message: 'bad <value> & "quote"', field: "name" },
    });
  });

  it("rejects malformed XML in the client transformer", () => {
    expect(() => transformer.transform("<user><id>1</user>", "xml")).to.throw();
    expect(() => transformer.transform("{nope", "json")).to.throw();
  });
});
