import { Type } from 'typebox';

/** The contract's error body, for the OpenAPI document. */
export const ErrorBodySchema = Type.Object(
  {
    message: Type.String(),
    errors: Type.Record(Type.String(), Type.Unknown()),
  },
  {
    $id: 'ErrorBody',
    description: 'message joins every error into one sentence; errors maps fields (or base) to messages',
  },
);

export const errorResponses = {
  401: ErrorBodySchema,
  404: ErrorBodySchema,
  422: ErrorBodySchema,
} as const;

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) =>
  Type.Union([t, Type.Null()]);

/** Free-form object kept as given (additional_data and friends). */
export const FreeObject = Type.Record(Type.String(), Type.Unknown());

export const IdParams = Type.Object({ id: Type.String() });
