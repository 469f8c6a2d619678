//! JSON with every object key at most once: a parameter or model file that states a key twice is an
//! error, not the last value silently winning (serde_json's `Value` keeps the last).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses JSON text, refusing an object that repeats a key (`duplicate key "method" at line 3 column 10`).
pub fn parse_json(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<Strict>(text).map(|s| s.0)
}

/// A [`Value`] whose objects were checked for repeated keys.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}; give each key once")));
            }
            let Strict(v) = map.next_value()?;
            object.insert(key, v);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_serde_json_parses_them() {
        let text = r#"{"a": [1, -2, 0.5, 1e300, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#;
        assert_eq!(parse_json(text).unwrap(), serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn a_repeated_key_is_an_error_at_any_depth() {
        let err = parse_json("{\n\"method\": \"gsu\",\n\"method\": \"hinge\"}").unwrap_err().to_string();
        assert!(err.starts_with("duplicate key \"method\"; give each key once at line 3"), "{err}");
        assert!(parse_json(r#"{"a": [{"b": 1, "b": 2}]}"#).is_err());
        assert!(parse_json(r#"{"a": {"b": 1}, "b": {"a": 2}}"#).is_ok());
    }
}
